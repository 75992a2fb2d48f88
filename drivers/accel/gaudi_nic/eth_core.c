// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_nic NIC core: for each device, the emulated MACs of its ports, the
 * devlink instance and the auxiliary device gaudi_nic.eth.N that the
 * Ethernet driver binds to.  Called from the core driver's probe; torn
 * down by a devres action when the platform device goes away.
 */
#include <linux/device.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include "eth.h"
#include "sim/mac.h"

unsigned int gn_nic_num_ports(struct gn_nic *nic)
{
	return nic->num_ports;
}
EXPORT_SYMBOL_NS_GPL(gn_nic_num_ports, GAUDI_NIC);

struct gn_mac *gn_nic_port_mac(struct gn_nic *nic, unsigned int port)
{
	return port < nic->num_ports ? nic->macs[port] : NULL;
}
EXPORT_SYMBOL_NS_GPL(gn_nic_port_mac, GAUDI_NIC);

const struct gaudi_nic_mac_ops *gn_nic_mac_ops(struct gn_nic *nic)
{
	return nic->mac_ops;
}

struct devlink *gn_nic_devlink(struct gn_nic *nic)
{
	return nic->devlink;
}
EXPORT_SYMBOL_NS_GPL(gn_nic_devlink, GAUDI_NIC);

static void gn_nic_adev_release(struct device *dev)
{
	kfree(to_gaudi_nic_adev(to_auxiliary_dev(dev)));
}

static void gn_nic_free(struct gn_nic *nic)
{
	unsigned int i;

	for (i = 0; i < nic->num_ports; i++)
		gn_mac_destroy(nic->macs[i]);
	kfree(nic);
}

static void gn_nic_fini(void *data)
{
	struct gn_nic *nic = data;

	auxiliary_device_delete(&nic->eth_adev->adev);
	auxiliary_device_uninit(&nic->eth_adev->adev);
	gn_devlink_fini(nic);
	nic->gdev->nic = NULL;
	gn_nic_free(nic);
}

int gaudi_nic_eth_init(struct gaudi_nic_dev *gdev)
{
	struct device *dev = &gdev->pdev->dev;
	struct gaudi_nic_adev *gadev;
	struct gn_nic *nic;
	unsigned int i;
	int ret;

	nic = kzalloc(struct_size(nic, macs, gdev->num_ports), GFP_KERNEL);
	if (!nic)
		return -ENOMEM;
	nic->gdev = gdev;
	nic->num_ports = gdev->num_ports;
	nic->roce_enabled = true;
	nic->mac_ops = &gnsim_mac_ops;
	for (i = 0; i < nic->num_ports; i++) {
		nic->macs[i] = gn_mac_create(dev, i);
		if (!nic->macs[i]) {
			gn_nic_free(nic);
			return -ENOMEM;
		}
	}
	ret = gn_devlink_init(nic);
	if (ret) {
		gn_nic_free(nic);
		return ret;
	}

	gadev = kzalloc(sizeof(*gadev), GFP_KERNEL);
	if (!gadev) {
		ret = -ENOMEM;
		goto err_devlink;
	}
	gadev->gdev = gdev;
	gadev->nic = nic;
	gadev->adev.name = "eth";
	gadev->adev.id = gdev->id;
	gadev->adev.dev.parent = dev;
	gadev->adev.dev.release = gn_nic_adev_release;
	ret = auxiliary_device_init(&gadev->adev);
	if (ret) {
		kfree(gadev);
		goto err_devlink;
	}
	nic->eth_adev = gadev;
	gdev->nic = nic;
	ret = auxiliary_device_add(&gadev->adev);
	if (ret) {
		auxiliary_device_uninit(&gadev->adev);
		gdev->nic = NULL;
		goto err_devlink;
	}
	return devm_add_action_or_reset(dev, gn_nic_fini, nic);

err_devlink:
	gn_devlink_fini(nic);
	gn_nic_free(nic);
	return ret;
}
