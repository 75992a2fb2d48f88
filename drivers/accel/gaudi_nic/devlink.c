// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_nic devlink instance: one per device, on the platform device
 * (devlink dev platform/gaudi_nic.N).  Info: serial number and versions;
 * ports: registered by the Ethernet driver, one per netdev; parameter
 * enable_roce (runtime, default true) switches RoCE receive steering.
 */
#include <linux/platform_device.h>
#include "eth.h"

static struct gn_nic *gn_devlink_nic(struct devlink *devlink)
{
	return *(struct gn_nic **)devlink_priv(devlink);
}

static int gn_devlink_info_get(struct devlink *devlink,
			       struct devlink_info_req *req,
			       struct netlink_ext_ack *extack)
{
	struct gn_nic *nic = gn_devlink_nic(devlink);
	int ret;

	ret = devlink_info_serial_number_put(req, nic->gdev->serial);
	if (ret)
		return ret;
	ret = devlink_info_version_fixed_put(req,
					     DEVLINK_INFO_VERSION_GENERIC_ASIC_ID,
					     "gaudi_nic-sim");
	if (ret)
		return ret;
	ret = devlink_info_version_fixed_put(req,
					     DEVLINK_INFO_VERSION_GENERIC_ASIC_REV,
					     "1");
	if (ret)
		return ret;
	return devlink_info_version_running_put(req,
						DEVLINK_INFO_VERSION_GENERIC_FW,
						GN_ETH_FW_VERSION);
}

static const struct devlink_ops gn_devlink_ops = {
	.info_get = gn_devlink_info_get,
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
