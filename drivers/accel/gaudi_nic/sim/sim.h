/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The emulated gaudi_nic ASIC (gaudi_nic_sim.ko).  The core driver sees a
 * platform device whose platform data points at the struct gaudi_nic_hw
 * embedded in a struct gnsim_dev: the description and ops of the
 * "hardware" (<linux/gaudi_nic/hw.h>).
 */
#ifndef _GAUDI_NIC_SIM_H
#define _GAUDI_NIC_SIM_H

#include <linux/kref.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/gaudi_nic/hw.h>

/* What the emulator offers: devices, ports and HBM (new_device) */
#define GNSIM_MAX_DEVICES		256
#define GNSIM_MAX_PORTS			24
#define GNSIM_DEFAULT_PORTS		2
#define GNSIM_DEFAULT_HBM_MB		64
#define GNSIM_MAX_HBM_MB		4096

struct gnsim_dev {
	/* what the core driver sees: id, ports, HBM, serial, ops */
	struct gaudi_nic_hw hw;
	struct kref ref;
	struct rcu_head rcu;
	unsigned long nframes;
	/* protects frames[] */
	spinlock_t lock;
	struct page **frames;
	/* under gnsim_lock: NULL once del_device ran */
	struct platform_device *pdev;
	/* a driver instance owns the device (probe .. drm release) */
	atomic_t claimed;
	/* debugfs gaudi_nic_sim/gaudi_nic.N: the test hooks */
	struct dentry *debugfs;
	/* the MAC of each port while the core has it, written under RTNL */
	struct gn_mac **macs;
};

static inline struct gnsim_dev *to_gnsim_dev(struct gaudi_nic_hw *hw)
{
	return container_of(hw, struct gnsim_dev, hw);
}

struct net_device;
/* Under RTNL: the MAC of the emulated port @nd drives, or NULL. */
struct gn_mac *gnsim_netdev_mac(struct net_device *nd);

#endif /* _GAUDI_NIC_SIM_H */
