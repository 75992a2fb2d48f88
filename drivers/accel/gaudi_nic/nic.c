// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_nic NIC core: for each device, the MACs of its ports and its RoCE
 * engine (through the hardware ops, <linux/gaudi_nic/hw.h>), the devlink
 * instance, and the auxiliary devices gaudi_nic.eth.N and gaudi_nic.rdma.N
 * that the Ethernet and RDMA drivers bind to, from one table.  Called
 * from the core driver's probe; torn down by a devres action when the
 * platform device goes away.
 */
#include <linux/device.h>
#include <linux/platform_device.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/gaudi_nic/hw.h>
#include <linux/gaudi_nic/roce_hw.h>
#include "eth.h"

unsigned int gn_nic_num_ports(struct gn_nic *nic)
{
	return nic->num_ports;
}

struct gn_mac *gn_nic_port_mac(struct gn_nic *nic, unsigned int port)
{
	return port < nic->num_ports ? nic->macs[port] : NULL;
}

const struct gaudi_nic_mac_ops *gn_nic_mac_ops(struct gn_nic *nic)
{
	return nic->mac_ops;
}

struct devlink *gn_nic_devlink(struct gn_nic *nic)
{
	return nic->devlink;
}

/* ------------------------------------------------ ports' netdevs */

/* The Ethernet driver's netdev of @port is now @ndev (NULL: none). */
void gn_nic_set_netdev(struct gn_nic *nic, unsigned int port,
		       struct net_device *ndev)
{
	ASSERT_RTNL();
	if (!WARN_ON_ONCE(port >= ARRAY_SIZE(nic->netdevs)))
		nic->netdevs[port] = ndev;
}

struct net_device *gaudi_nic_port_netdev(struct gaudi_nic_dev *gdev, u32 port)
{
	struct gn_nic *nic = gdev->nic;
	struct net_device *nd;

	ASSERT_RTNL();
	if (!nic || port >= nic->num_ports)
		return NULL;
	nd = nic->netdevs[port];
	if (nd)
		dev_hold(nd);
	return nd;
}
EXPORT_SYMBOL_NS_GPL(gaudi_nic_port_netdev, GAUDI_NIC);

int gaudi_nic_port_of(struct gaudi_nic_dev *gdev, struct net_device *nd)
{
	struct gn_nic *nic = gdev->nic;
	unsigned int port;

	ASSERT_RTNL();
	for (port = 0; nic && nd && port < nic->num_ports; port++)
		if (nic->netdevs[port] == nd)
			return port;
	return -ENOENT;
}
EXPORT_SYMBOL_NS_GPL(gaudi_nic_port_of, GAUDI_NIC);

/* ------------------------------------------------ auxiliary devices */

static void gn_nic_adev_release(struct device *dev)
{
	kfree(to_gaudi_nic_adev(to_auxiliary_dev(dev)));
}

/* A function's container; the Ethernet function needs no more than this. */
static struct gaudi_nic_adev *gn_nic_adev_new(struct gn_nic *nic)
{
	struct gaudi_nic_adev *gadev = kzalloc(sizeof(*gadev), GFP_KERNEL);

	if (!gadev)
		return ERR_PTR(-ENOMEM);
	gadev->gdev = nic->gdev;
	return gadev;
}

static struct gaudi_nic_adev *gn_nic_rdma_alloc(struct gn_nic *nic)
{
	struct gaudi_nic_adev *gadev;

	if (!nic->roce || !nic->gdev->hw->roce_ops)
		return NULL;	/* no RoCE engine on this device */
	gadev = gn_nic_adev_new(nic);
	if (!IS_ERR(gadev)) {
		gadev->roce = nic->roce;
		gadev->roce_ops = nic->gdev->hw->roce_ops;
	}
	return gadev;
}

/*
 * The auxiliary devices of a device, gaudi_nic.<name>.N, added in this
 * order and deleted in the reverse one, each in a struct gaudi_nic_adev
 * (<linux/gaudi_nic/core.h>).  @alloc returns it with the function's
 * fields filled, NULL if the hardware lacks the function, or an ERR_PTR.
 */
static const struct gn_nic_adev_info {
	const char *name;
	struct gaudi_nic_adev *(*alloc)(struct gn_nic *nic);
} gn_nic_adevs[GN_NIC_ADEVS] = {
	[GN_NIC_ADEV_ETH] = {
		.name = "eth",
		.alloc = gn_nic_adev_new,
	},
	[GN_NIC_ADEV_RDMA] = {
		.name = "rdma",
		.alloc = gn_nic_rdma_alloc,
	},
};

static void gn_nic_adev_del(struct gn_nic *nic, unsigned int i)
{
	if (!nic->adevs[i])
		return;
	auxiliary_device_delete(nic->adevs[i]);
	auxiliary_device_uninit(nic->adevs[i]);
	nic->adevs[i] = NULL;
}

/* Auxiliary device @i, if the hardware has its function. */
static int gn_nic_adev_add(struct gn_nic *nic, unsigned int i)
{
	struct gaudi_nic_dev *gdev = nic->gdev;
	struct gaudi_nic_adev *gadev;
	struct auxiliary_device *adev;
	int ret;

	gadev = gn_nic_adevs[i].alloc(nic);
	if (IS_ERR_OR_NULL(gadev))
		return PTR_ERR_OR_ZERO(gadev);
	adev = &gadev->adev;
	adev->name = gn_nic_adevs[i].name;
	adev->id = gdev->id;
	adev->dev.parent = &gdev->pdev->dev;
	adev->dev.release = gn_nic_adev_release;
	ret = auxiliary_device_init(adev);
	if (ret) {
		kfree(gadev);
		return ret;
	}
	ret = __auxiliary_device_add(adev, GAUDI_NIC_DRV_NAME);
	if (ret) {
		/* the release callback frees the container */
		auxiliary_device_uninit(adev);
		return ret;
	}
	nic->adevs[i] = adev;
	return 0;
}

/*
 * The device's functions, its auxiliary devices, go (RDMA first: the RDMA
 * core disassociates its users, whose QPs, MRs and mappings die; then the
 * netdevs and their devlink ports) or come, always under the devlink
 * instance lock: at probe and removal, and in a reload (devlink.c), as
 * mlx5 does.  The Ethernet driver registers its devlink ports under it.
 */
void gn_nic_funcs_del(struct gn_nic *nic)
{
	unsigned int i;

	devl_assert_locked(nic->devlink);
	for (i = GN_NIC_ADEVS; i-- > 0;)
		gn_nic_adev_del(nic, i);
}

int gn_nic_funcs_add(struct gn_nic *nic)
{
	unsigned int i;
	int ret;

	devl_assert_locked(nic->devlink);
	for (i = 0; i < GN_NIC_ADEVS; i++) {
		ret = gn_nic_adev_add(nic, i);
		if (ret) {
			dev_err(&nic->gdev->pdev->dev,
				"cannot add auxiliary device %s: %d\n",
				gn_nic_adevs[i].name, ret);
			gn_nic_funcs_del(nic);
			return ret;
		}
	}
	return 0;
}

/* ---------------------------------------------------------- NIC core */

static void gn_nic_free(struct gn_nic *nic)
{
	const struct gaudi_nic_hw_ops *ops = nic->gdev->hw->ops;
	unsigned int i;

	if (!IS_ERR_OR_NULL(nic->roce))
		ops->roce_destroy(nic->roce);
	for (i = 0; i < nic->num_ports; i++)
		if (nic->macs[i])
			ops->mac_destroy(nic->gdev->hw, nic->macs[i]);
	kfree(nic);
}

/* devm action: the device goes away; the drivers first, then the hardware. */
static void gn_nic_fini(void *data)
{
	struct gn_nic *nic = data;

	devl_lock(nic->devlink);
	gn_nic_funcs_del(nic);
	devl_unlock(nic->devlink);
	gn_devlink_fini(nic);
	nic->gdev->nic = NULL;
	gn_nic_free(nic);
}

/*
 * Called by the core's probe: the MACs of the ports, the RoCE engine,
 * devlink, then the auxiliary devices the Ethernet and RDMA drivers bind
 * to; undone by a devm action.
 */
int gn_nic_init(struct gaudi_nic_dev *gdev)
{
	const struct gaudi_nic_hw_ops *ops = gdev->hw->ops;
	struct device *dev = &gdev->pdev->dev;
	struct gn_nic *nic;
	unsigned int i;
	int ret;

	nic = kzalloc(struct_size(nic, macs, gdev->num_ports), GFP_KERNEL);
	if (!nic)
		return -ENOMEM;
	nic->gdev = gdev;
	nic->num_ports = gdev->num_ports;
	nic->roce_enabled = true;
	nic->mac_ops = gdev->hw->mac_ops;
	for (i = 0; i < nic->num_ports; i++) {
		nic->macs[i] = ops->mac_create(gdev->hw, dev, i);
		if (!nic->macs[i]) {
			gn_nic_free(nic);
			return -ENOMEM;
		}
	}
	nic->roce = ops->roce_create ?
		ops->roce_create(gdev->hw, dev, nic->macs) : NULL;
	if (IS_ERR(nic->roce)) {
		ret = PTR_ERR(nic->roce);
		gn_nic_free(nic);
		return ret;
	}
	ret = gn_devlink_init(nic);
	if (ret) {
		gn_nic_free(nic);
		return ret;
	}
	gdev->nic = nic;
	devl_lock(nic->devlink);
	ret = gn_nic_funcs_add(nic);
	devl_unlock(nic->devlink);
	if (ret) {
		gdev->nic = NULL;
		gn_devlink_fini(nic);
		gn_nic_free(nic);
		return ret;
	}
	return devm_add_action_or_reset(dev, gn_nic_fini, nic);
}
