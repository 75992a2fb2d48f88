/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The emulated gaudi_nic ASIC.  The core driver sees a platform device
 * whose platform data points at a struct gn_sim_dev: the "hardware".
 */
#ifndef _GAUDI_NIC_SIM_H
#define _GAUDI_NIC_SIM_H

#include <linux/kref.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/gaudi_nic/core.h>

struct gn_sim_dev {
	struct kref ref;
	struct rcu_head rcu;
	u32 id;
	u32 num_ports;
	u64 hbm_size;
	u64 bus_base;
	unsigned long nframes;
	char serial[GAUDI_NIC_SERIAL_MAX];
	/* protects frames[] */
	spinlock_t lock;
	struct page **frames;
	/* under gn_sim_lock: NULL once del_device ran */
	struct platform_device *pdev;
	/* a driver instance owns the device (probe .. drm release) */
	atomic_t claimed;
	/* debugfs gaudi_nic_sim/gaudi_nic.N: the test hooks */
	struct dentry *debugfs;
};

struct gn_sim_pdata {
	struct gn_sim_dev *sim;
};

extern const struct attribute_group *gn_sim_driver_groups[];

int gn_sim_new_device(u32 id, u32 ports, u32 hbm_mb);
int gn_sim_del_device(u32 id);
void gn_sim_shutdown(void);
void gn_sim_exit(void);

void gn_sim_get(struct gn_sim_dev *sim);
/* The debugfs directory of emulated device @dev (NULL if none). */
struct dentry *gn_sim_debugfs(struct device *dev);
void gn_sim_put(struct gn_sim_dev *sim);

/* HBM frames are PAGE_SIZE; backing exists only for populated frames. */
int gn_sim_hbm_populate(struct gn_sim_dev *sim, unsigned long frame,
			unsigned long n);
void gn_sim_hbm_discard(struct gn_sim_dev *sim, unsigned long frame,
			unsigned long n);
struct page *gn_sim_hbm_get_page(struct gn_sim_dev *sim, unsigned long frame);

#endif /* _GAUDI_NIC_SIM_H */
