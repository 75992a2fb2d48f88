// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_nic devlink instance: one per device, on the platform device
 * (devlink dev platform/gaudi_nic.N).  Info: serial number and versions;
 * ports: registered by the Ethernet driver, one per netdev; parameter
 * enable_roce (runtime, default true) switches RoCE receive steering;
 * reload (driver_reinit): the device's reset.
 */
#include <linux/platform_device.h>
#include <linux/gaudi_nic/hw.h>
#include "eth.h"
#include "gn_internal.h"

static struct gn_nic *gn_devlink_nic(struct devlink *devlink)
{
	return *(struct gn_nic **)devlink_priv(devlink);
}

static int gn_devlink_info_get(struct devlink *devlink,
			       struct devlink_info_req *req,
			       struct netlink_ext_ack *extack)
{
	struct gn_nic *nic = gn_devlink_nic(devlink);
	const struct gaudi_nic_hw *hw = nic->gdev->hw;
	int ret;

	ret = devlink_info_serial_number_put(req, nic->gdev->serial);
	if (ret)
		return ret;
	ret = devlink_info_version_fixed_put(req,
					     DEVLINK_INFO_VERSION_GENERIC_ASIC_ID,
					     hw->asic_id);
	if (ret)
		return ret;
	ret = devlink_info_version_fixed_put(req,
					     DEVLINK_INFO_VERSION_GENERIC_ASIC_REV,
					     hw->asic_rev);
	if (ret)
		return ret;
	return devlink_info_version_running_put(req,
						DEVLINK_INFO_VERSION_GENERIC_FW,
						hw->fw_version);
}

/*
 * devlink dev reload (action driver_reinit): the device's reset, which
 * takes back its memory from everyone who holds it.  Down: the functions
 * go (the RDMA device, whose users are disassociated; the netdevs and
 * their devlink ports), then gn_mem_reset(): every open accel context
 * dies (-EIO), its CPU mappings are zapped, every dma-buf of the HBM is
 * revoked, and only then is the HBM given back.  Up: new functions, the
 * netdevs in the devlink instance's namespace (a reload with netns moves
 * them, as netdevsim's do).  The MACs, their cables and the RoCE engine
 * are the hardware's and stay.
 */
static int gn_devlink_reload_down(struct devlink *devlink, bool netns_change,
				  enum devlink_reload_action action,
				  enum devlink_reload_limit limit,
				  struct netlink_ext_ack *extack)
{
	struct gn_nic *nic = gn_devlink_nic(devlink);

	dev_info(&nic->gdev->pdev->dev,
		 "reset (devlink reload): taking the device's memory back from its users\n");
	gn_nic_funcs_del(nic);
	gn_mem_reset(nic->gdev);
	return 0;
}

static int gn_devlink_reload_up(struct devlink *devlink,
				enum devlink_reload_action action,
				enum devlink_reload_limit limit,
				u32 *actions_performed,
				struct netlink_ext_ack *extack)
{
	struct gn_nic *nic = gn_devlink_nic(devlink);
	int ret;

	*actions_performed = BIT(DEVLINK_RELOAD_ACTION_DRIVER_REINIT);
	ret = gn_nic_funcs_add(nic);
	if (ret)
		NL_SET_ERR_MSG_MOD(extack,
				   "the device's netdevs or RDMA device did not come back: see the kernel log");
	return ret;
}

static const struct devlink_ops gn_devlink_ops = {
	.info_get = gn_devlink_info_get,
	.reload_actions = BIT(DEVLINK_RELOAD_ACTION_DRIVER_REINIT),
	.reload_down = gn_devlink_reload_down,
	.reload_up = gn_devlink_reload_up,
};

static int gn_devlink_roce_get(struct devlink *devlink, u32 id,
			       struct devlink_param_gset_ctx *ctx)
{
	ctx->val.vbool = READ_ONCE(gn_devlink_nic(devlink)->roce_enabled);
	return 0;
}

static int gn_devlink_roce_set(struct devlink *devlink, u32 id,
			       struct devlink_param_gset_ctx *ctx,
			       struct netlink_ext_ack *extack)
{
	struct gn_nic *nic = gn_devlink_nic(devlink);
	unsigned int i;

	WRITE_ONCE(nic->roce_enabled, ctx->val.vbool);
	for (i = 0; i < nic->num_ports; i++)
		nic->mac_ops->set_roce(nic->macs[i], ctx->val.vbool);
	return 0;
}

static const struct devlink_param gn_devlink_params[] = {
	DEVLINK_PARAM_GENERIC(ENABLE_ROCE, BIT(DEVLINK_PARAM_CMODE_RUNTIME),
			      gn_devlink_roce_get, gn_devlink_roce_set, NULL),
};

int gn_devlink_init(struct gn_nic *nic)
{
	struct devlink *devlink;
	int ret;

	devlink = devlink_alloc(&gn_devlink_ops, sizeof(struct gn_nic *),
				&nic->gdev->pdev->dev);
	if (!devlink)
		return -ENOMEM;
	*(struct gn_nic **)devlink_priv(devlink) = nic;
	ret = devlink_params_register(devlink, gn_devlink_params,
				      ARRAY_SIZE(gn_devlink_params));
	if (ret) {
		devlink_free(devlink);
		return ret;
	}
	nic->devlink = devlink;
	devlink_register(devlink);
	return 0;
}

void gn_devlink_fini(struct gn_nic *nic)
{
	if (!nic->devlink)
		return;
	devlink_unregister(nic->devlink);
	devlink_params_unregister(nic->devlink, gn_devlink_params,
				  ARRAY_SIZE(gn_devlink_params));
	devlink_free(nic->devlink);
	nic->devlink = NULL;
}
