// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_nic devlink instance: one per device, on the platform device
 * (devlink dev platform/gaudi_nic.N).  Info: serial number and versions;
 * ports: registered by the Ethernet driver, one per netdev; parameters:
 * enable_roce (runtime, default true) switches RoCE receive steering,
 * max_<kind>_per_ctx (runtime) are the RDMA function's per-context limits
 * and max_hbm_mb_per_ctx an accel context's HBM quota;
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

/*
 * The RDMA function's per-context limits (enum gaudi_nic_ctx_limit): one
 * user context of gaudi_ib stops at them with EDQUOT.  The defaults are
 * an eighth of each id space of the engine (rdma.md, "Per-context
 * limits"); 0 lifts a limit.  They outlive a reload, as the device does.
 */
#define GN_DEVLINK_PARAM_CTX_BASE	(DEVLINK_PARAM_GENERIC_ID_MAX + 1)

static const u32 gn_ctx_limit_def[GAUDI_NIC_CTX_LIMITS] = {
	[GAUDI_NIC_CTX_PD] = 8192,
	[GAUDI_NIC_CTX_CQ] = 128,
	[GAUDI_NIC_CTX_QP] = 128,
	[GAUDI_NIC_CTX_SRQ] = 128,
	[GAUDI_NIC_CTX_MR] = 1024,
	[GAUDI_NIC_CTX_AH] = 8192,
	[GAUDI_NIC_CTX_MW] = 512,
	[GAUDI_NIC_CTX_DM] = 64,
	[GAUDI_NIC_CTX_RING_MB] = 1024,
};

/*
 * HBM one accel context (one open of /dev/accel/accelN) may hold, in MiB;
 * 0, the default: no quota but the device's size (accel.md).
 */
#define GN_DEVLINK_PARAM_HBM_QUOTA	(GN_DEVLINK_PARAM_CTX_BASE + \
					 GAUDI_NIC_CTX_LIMITS)

/* Where u32 param @id lives: a per-context limit, or the HBM quota. */
static u32 *gn_devlink_u32(struct devlink *devlink, u32 id)
{
	struct gaudi_nic_dev *gdev = gn_devlink_nic(devlink)->gdev;

	if (id == GN_DEVLINK_PARAM_HBM_QUOTA)
		return &gdev->mem->quota_mb;
	return &gdev->ctx_max[id - GN_DEVLINK_PARAM_CTX_BASE];
}

static int gn_devlink_u32_get(struct devlink *devlink, u32 id,
			      struct devlink_param_gset_ctx *ctx)
{
	ctx->val.vu32 = READ_ONCE(*gn_devlink_u32(devlink, id));
	return 0;
}

static int gn_devlink_u32_set(struct devlink *devlink, u32 id,
			      struct devlink_param_gset_ctx *ctx,
			      struct netlink_ext_ack *extack)
{
	WRITE_ONCE(*gn_devlink_u32(devlink, id), ctx->val.vu32);
	return 0;
}

/* a driver-specific u32 param, runtime only */
#define GN_DEVLINK_PARAM_U32(id, name)					\
	DEVLINK_PARAM_DRIVER(id, name, DEVLINK_PARAM_TYPE_U32,		\
			     BIT(DEVLINK_PARAM_CMODE_RUNTIME),		\
			     gn_devlink_u32_get, gn_devlink_u32_set, NULL)
/* the param of limit GAUDI_NIC_CTX_<kind>, named @name */
#define GN_DEVLINK_PARAM_CTX(kind, name)				\
	GN_DEVLINK_PARAM_U32(GN_DEVLINK_PARAM_CTX_BASE + GAUDI_NIC_CTX_##kind, \
			     name)

static const struct devlink_param gn_devlink_params[] = {
	DEVLINK_PARAM_GENERIC(ENABLE_ROCE, BIT(DEVLINK_PARAM_CMODE_RUNTIME),
			      gn_devlink_roce_get, gn_devlink_roce_set, NULL),
	GN_DEVLINK_PARAM_CTX(PD, "max_pd_per_ctx"),
	GN_DEVLINK_PARAM_CTX(CQ, "max_cq_per_ctx"),
	GN_DEVLINK_PARAM_CTX(QP, "max_qp_per_ctx"),
	GN_DEVLINK_PARAM_CTX(SRQ, "max_srq_per_ctx"),
	GN_DEVLINK_PARAM_CTX(MR, "max_mr_per_ctx"),
	GN_DEVLINK_PARAM_CTX(AH, "max_ah_per_ctx"),
	GN_DEVLINK_PARAM_CTX(MW, "max_mw_per_ctx"),
	GN_DEVLINK_PARAM_CTX(DM, "max_dm_per_ctx"),
	GN_DEVLINK_PARAM_CTX(RING_MB, "max_ring_mb_per_ctx"),
	GN_DEVLINK_PARAM_U32(GN_DEVLINK_PARAM_HBM_QUOTA, "max_hbm_mb_per_ctx"),
};

int gn_devlink_init(struct gn_nic *nic)
{
	struct devlink *devlink;
	unsigned int i;
	int ret;

	devlink = devlink_alloc(&gn_devlink_ops, sizeof(struct gn_nic *),
				&nic->gdev->pdev->dev);
	if (!devlink)
		return -ENOMEM;
	*(struct gn_nic **)devlink_priv(devlink) = nic;
	for (i = 0; i < GAUDI_NIC_CTX_LIMITS; i++)
		nic->gdev->ctx_max[i] = gn_ctx_limit_def[i];
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
