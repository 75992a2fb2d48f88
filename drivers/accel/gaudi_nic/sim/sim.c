// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_nic_sim.ko, the emulated gaudi_nic ASIC: device creation and
 * removal (module parameter num_devices, and the control files new_device
 * / del_device of its own platform driver, gaudi_nic_sim), the HBM page
 * pool, and the bus address windows through which every device reaches
 * every HBM.  Each device is a gaudi_nic.N platform device whose platform
 * data is its struct gaudi_nic_hw; gaudi_nic.ko binds to it, before or
 * after this module loads.  Unregistering a device unbinds the driver
 * first; the driver's claim keeps the description alive until it lets go.
 */
#include <linux/debugfs.h>
#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/platform_device.h>
#include <linux/random.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/wait_bit.h>
#include <linux/xarray.h>

#include "sim.h"
#include "mac.h"
#include "roce.h"
#include "bus.h"

static unsigned int num_devices = 1;
module_param(num_devices, uint, 0444);
MODULE_PARM_DESC(num_devices, "Emulated devices created at load (default 1)");

/*
 * Mixed into every device's serial number, from which the driver derives
 * the ports' MAC addresses (and gaudi_ib its GUIDs): devices of the same
 * id on two hosts must differ, as two boards' serials do, or the ports of
 * two machines joined by a wire would share addresses.
 */
static unsigned int host_id;
module_param(host_id, uint, 0444);
MODULE_PARM_DESC(host_id, "Part of every device's serial number, so that devices on different hosts differ (default: random at load)");

/* Device id -> struct gnsim_dev, from creation until the last reference. */
static DEFINE_XARRAY(gnsim_windows);
/* Serialises new_device, del_device and shutdown. */
static DEFINE_MUTEX(gnsim_lock);
static bool gnsim_stopping;
static const struct gaudi_nic_hw_ops gnsim_hw_ops;
/* debugfs gaudi_nic_sim/: a directory per device, under gnsim_lock */
static struct dentry *gnsim_debugfs_root;

static void gnsim_get(struct gnsim_dev *sim)
{
	kref_get(&sim->ref);
}

static void gnsim_free_rcu(struct rcu_head *rcu)
{
	struct gnsim_dev *sim = container_of(rcu, struct gnsim_dev, rcu);
	unsigned long i;

	kfree(sim->macs);
	for (i = 0; i < sim->nframes; i++)
		if (sim->frames[i])
			__free_page(sim->frames[i]);
	kvfree(sim->frames);
	kfree(sim);
}

/* Devices not released yet: module exit waits for the last one. */
static atomic_t gnsim_live = ATOMIC_INIT(0);

static void gnsim_release(struct kref *ref)
{
	struct gnsim_dev *sim = container_of(ref, struct gnsim_dev, ref);

	xa_erase(&gnsim_windows, sim->hw.id);
	if (atomic_dec_and_test(&gnsim_live))
		wake_up_var(&gnsim_live);
	/* Bus translations look the device up under RCU. */
	call_rcu(&sim->rcu, gnsim_free_rcu);
}

static void gnsim_put(struct gnsim_dev *sim)
{
	kref_put(&sim->ref, gnsim_release);
}

static int gnsim_new_device(u32 id, u32 ports, u32 hbm_mb)
{
	struct platform_device_info info = {
		.name = GAUDI_NIC_HW_NAME,
		.id = id,
		.dma_mask = DMA_BIT_MASK(64),
		.size_data = sizeof(struct gaudi_nic_hw *),
	};
	struct gaudi_nic_hw *pdata;
	struct platform_device *pdev;
	struct gnsim_dev *sim;
	char name[32];
	int ret;

	if (id >= GNSIM_MAX_DEVICES || ports > GNSIM_MAX_PORTS ||
	    !hbm_mb || hbm_mb > GNSIM_MAX_HBM_MB)
		return -EINVAL;

	sim = kzalloc(sizeof(*sim), GFP_KERNEL);
	if (!sim)
		return -ENOMEM;
	kref_init(&sim->ref);
	spin_lock_init(&sim->lock);
	sim->hw.ops = &gnsim_hw_ops;
	sim->hw.mac_ops = &gnsim_mac_ops;
	sim->hw.roce_ops = &gnsim_roce_ops;
	sim->hw.owner = THIS_MODULE;
	sim->hw.id = id;
	sim->hw.num_ports = ports;
	sim->hw.asic_id = "gaudi_nic-sim";
	sim->hw.asic_rev = "1";
	sim->hw.fw_version = "1.0.0-sim";
	sim->hw.hbm_size = (u64)hbm_mb << 20;
	sim->nframes = sim->hw.hbm_size >> PAGE_SHIFT;
	sim->hw.bus_base = GNSIM_BUS_BASE + (u64)id * GNSIM_BUS_WINDOW;
	snprintf(sim->hw.serial, sizeof(sim->hw.serial), "GNSIM%04u%08X", id,
		 (u32)(sim->hw.bus_base >> 32) ^ (hbm_mb << 8) ^ ports ^ host_id);
	sim->frames = kvcalloc(sim->nframes, sizeof(*sim->frames), GFP_KERNEL);
	sim->macs = kcalloc(ports, sizeof(*sim->macs), GFP_KERNEL);
	if (!sim->frames || !sim->macs) {
		kvfree(sim->frames);
		kfree(sim->macs);
		kfree(sim);
		return -ENOMEM;
	}

	mutex_lock(&gnsim_lock);
	if (gnsim_stopping) {
		ret = -ENODEV;
		goto err_unlock;
	}
	ret = xa_insert(&gnsim_windows, id, sim, GFP_KERNEL);
	if (ret) {
		struct gnsim_dev *old = xa_load(&gnsim_windows, id);

		/* -EBUSY: id deleted, but its memory is still referenced */
		ret = (ret == -EBUSY && old && old->pdev) ? -EEXIST : ret;
		goto err_unlock;
	}
	if (!gnsim_debugfs_root)
		gnsim_debugfs_root = debugfs_create_dir("gaudi_nic_sim", NULL);
	snprintf(name, sizeof(name), "%s.%u", GAUDI_NIC_HW_NAME, id);
	sim->debugfs = debugfs_create_dir(name, gnsim_debugfs_root);
	pdata = &sim->hw;
	info.data = &pdata;
	pdev = platform_device_register_full(&info);
	if (IS_ERR(pdev)) {
		ret = PTR_ERR(pdev);
		debugfs_remove_recursive(sim->debugfs);
		xa_erase(&gnsim_windows, id);
		goto err_unlock;
	}
	sim->pdev = pdev;
	atomic_inc(&gnsim_live);
	mutex_unlock(&gnsim_lock);
	return 0;

err_unlock:
	mutex_unlock(&gnsim_lock);
	kvfree(sim->frames);
	kfree(sim->macs);
	kfree(sim);
	return ret;
}

static void gnsim_unplug(struct gnsim_dev *sim)
{
	struct platform_device *pdev = sim->pdev;

	lockdep_assert_held(&gnsim_lock);
	sim->pdev = NULL;
	platform_device_unregister(pdev);
	/* unbound: the MACs, and with them their knobs, are gone */
	debugfs_remove_recursive(sim->debugfs);
	sim->debugfs = NULL;
	gnsim_put(sim);
}

static int gnsim_del_device(u32 id)
{
	struct gnsim_dev *sim;
	int ret = -ENOENT;

	mutex_lock(&gnsim_lock);
	sim = xa_load(&gnsim_windows, id);
	if (sim && sim->pdev) {
		gnsim_unplug(sim);
		ret = 0;
	}
	mutex_unlock(&gnsim_lock);
	return ret;
}

/* Remove every device; no new ones can be created afterwards. */
static void gnsim_shutdown(void)
{
	struct gnsim_dev *sim;
	unsigned long id;

	mutex_lock(&gnsim_lock);
	gnsim_stopping = true;
	xa_for_each(&gnsim_windows, id, sim)
		if (sim->pdev)
			gnsim_unplug(sim);
	mutex_unlock(&gnsim_lock);
}

static void gnsim_hbm_discard(struct gaudi_nic_hw *hw, unsigned long frame,
			      unsigned long n)
{
	struct gnsim_dev *sim = to_gnsim_dev(hw);
	unsigned long i;

	for (i = 0; i < n; i++) {
		struct page *page;

		spin_lock_bh(&sim->lock);
		page = sim->frames[frame + i];
		sim->frames[frame + i] = NULL;
		spin_unlock_bh(&sim->lock);
		/* Holders of a reference (CPU mappings, bus users) keep it. */
		if (page)
			put_page(page);
	}
}

static int gnsim_hbm_populate(struct gaudi_nic_hw *hw, unsigned long frame,
			      unsigned long n)
{
	struct gnsim_dev *sim = to_gnsim_dev(hw);
	unsigned long i;

	if (frame > sim->nframes || n > sim->nframes - frame)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		struct page *page = alloc_page(GFP_KERNEL | __GFP_ZERO);

		if (!page) {
			gnsim_hbm_discard(hw, frame, i);
			return -ENOMEM;
		}
		spin_lock_bh(&sim->lock);
		WARN_ON_ONCE(sim->frames[frame + i]);
		sim->frames[frame + i] = page;
		spin_unlock_bh(&sim->lock);
	}
	return 0;
}

static struct page *gnsim_page(struct gnsim_dev *sim, unsigned long frame)
{
	struct page *page = NULL;

	if (frame >= sim->nframes)
		return NULL;
	spin_lock_bh(&sim->lock);
	page = sim->frames[frame];
	if (page)
		get_page(page);
	spin_unlock_bh(&sim->lock);
	return page;
}

static struct page *gnsim_hbm_get_page(struct gaudi_nic_hw *hw,
				       unsigned long frame)
{
	return gnsim_page(to_gnsim_dev(hw), frame);
}

/* One driver instance at a time; it holds a reference until it lets go. */
static int gnsim_claim(struct gaudi_nic_hw *hw)
{
	struct gnsim_dev *sim = to_gnsim_dev(hw);

	if (atomic_cmpxchg(&sim->claimed, 0, 1))
		return -EBUSY;
	gnsim_get(sim);
	return 0;
}

static void gnsim_release_hw(struct gaudi_nic_hw *hw)
{
	struct gnsim_dev *sim = to_gnsim_dev(hw);

	atomic_set(&sim->claimed, 0);
	gnsim_put(sim);
}

static struct gn_mac *gnsim_mac_create(struct gaudi_nic_hw *hw,
				       struct device *dma_dev,
				       unsigned int port)
{
	struct gnsim_dev *sim = to_gnsim_dev(hw);
	struct gn_mac *mac;

	if (port >= hw->num_ports)
		return NULL;
	mac = gnsim_mac_alloc(dma_dev, port, sim->debugfs);
	if (mac) {
		rtnl_lock();
		sim->macs[port] = mac;
		rtnl_unlock();
	}
	return mac;
}

static void gnsim_mac_destroy(struct gaudi_nic_hw *hw, struct gn_mac *mac)
{
	struct gnsim_dev *sim = to_gnsim_dev(hw);
	u32 p;

	rtnl_lock();
	for (p = 0; p < hw->num_ports; p++)
		if (sim->macs[p] == mac)
			sim->macs[p] = NULL;
	rtnl_unlock();
	gnsim_mac_free(mac);
}

/*
 * The MAC behind a netdev, from the device model alone (netdevsim's bus
 * asks its netdevs no more): a port's netdev descends from one of our
 * platform devices, and its dev_port is the port.  Under RTNL, so a
 * registered @nd keeps its driver, and with it the MACs, bound.
 */
struct gn_mac *gnsim_netdev_mac(struct net_device *nd)
{
	struct gn_mac *mac = NULL;
	struct platform_device *pdev;
	struct gnsim_dev *sim;
	struct device *d;

	ASSERT_RTNL();
	for (d = nd->dev.parent; d && !dev_is_platform(d); d = d->parent)
		;
	if (!d)
		return NULL;
	pdev = to_platform_device(d);
	if (strcmp(pdev->name, GAUDI_NIC_HW_NAME) || pdev->id < 0)
		return NULL;
	rcu_read_lock();
	sim = xa_load(&gnsim_windows, pdev->id);
	if (sim && gaudi_nic_hw_of(&pdev->dev) == &sim->hw &&
	    nd->dev_port < sim->hw.num_ports)
		mac = sim->macs[nd->dev_port];
	rcu_read_unlock();
	return mac;
}

static struct gaudi_nic_roce *gnsim_roce_create(struct gaudi_nic_hw *hw,
						struct device *dma_dev,
						struct gn_mac *const *macs)
{
	return gnsim_roce_alloc(dma_dev, hw->id, macs, hw->num_ports);
}

static const struct gaudi_nic_hw_ops gnsim_hw_ops = {
	.claim = gnsim_claim,
	.release = gnsim_release_hw,
	.hbm_populate = gnsim_hbm_populate,
	.hbm_discard = gnsim_hbm_discard,
	.hbm_get_page = gnsim_hbm_get_page,
	.mac_create = gnsim_mac_create,
	.mac_destroy = gnsim_mac_destroy,
	.roce_create = gnsim_roce_create,
	.roce_destroy = gnsim_roce_free,
};

/* ------------------------------------------------------- bus addresses */

struct page *gnsim_bus_get_page(u64 bus_addr, unsigned int *offset)
{
	struct gnsim_dev *sim;
	struct page *page = NULL;
	u64 id, off;

	if (bus_addr < GNSIM_BUS_BASE)
		return ERR_PTR(-EFAULT);
	id = (bus_addr - GNSIM_BUS_BASE) / GNSIM_BUS_WINDOW;
	off = (bus_addr - GNSIM_BUS_BASE) % GNSIM_BUS_WINDOW;
	if (id >= GNSIM_MAX_DEVICES)
		return ERR_PTR(-EFAULT);

	rcu_read_lock();
	sim = xa_load(&gnsim_windows, id);
	if (sim && off < sim->hw.hbm_size)
		page = gnsim_page(sim, off >> PAGE_SHIFT);
	rcu_read_unlock();
	if (!page)
		return ERR_PTR(-EFAULT);
	*offset = offset_in_page(off);
	return page;
}

static int gnsim_bus_copy(u64 bus_addr, void *buf, size_t len, bool write)
{
	while (len) {
		unsigned int off;
		struct page *page = gnsim_bus_get_page(bus_addr, &off);
		size_t chunk;

		if (IS_ERR(page))
			return PTR_ERR(page);
		chunk = min_t(size_t, len, PAGE_SIZE - off);
		if (write)
			memcpy_to_page(page, off, buf, chunk);
		else
			memcpy_from_page(buf, page, off, chunk);
		put_page(page);
		bus_addr += chunk;
		buf += chunk;
		len -= chunk;
	}
	return 0;
}

/* For test modules playing a peer device on the bus (sim/bus.h). */
int gnsim_bus_read(u64 bus_addr, void *dst, size_t len)
{
	return gnsim_bus_copy(bus_addr, dst, len, false);
}
EXPORT_SYMBOL_NS_GPL(gnsim_bus_read, GAUDI_NIC_SIM);

int gnsim_bus_write(u64 bus_addr, const void *src, size_t len)
{
	return gnsim_bus_copy(bus_addr, (void *)src, len, true);
}
EXPORT_SYMBOL_NS_GPL(gnsim_bus_write, GAUDI_NIC_SIM);

/* ------------------------------------------------- sysfs control files */

static ssize_t new_device_store(struct device_driver *drv, const char *buf,
				size_t count)
{
	unsigned int id, ports = GNSIM_DEFAULT_PORTS;
	unsigned int hbm_mb = GNSIM_DEFAULT_HBM_MB;
	char extra;
	int n, ret;

	n = sscanf(buf, "%u %u %u %c", &id, &ports, &hbm_mb, &extra);
	if (n < 1 || n > 3)
		return -EINVAL;
	ret = gnsim_new_device(id, ports, hbm_mb);
	return ret ? ret : count;
}
static DRIVER_ATTR_WO(new_device);

static ssize_t del_device_store(struct device_driver *drv, const char *buf,
				size_t count)
{
	unsigned int id;
	char extra;
	int ret;

	if (sscanf(buf, "%u %c", &id, &extra) != 1)
		return -EINVAL;
	ret = gnsim_del_device(id);
	return ret ? ret : count;
}
static DRIVER_ATTR_WO(del_device);

static struct attribute *gnsim_driver_attrs[] = {
	&driver_attr_new_device.attr,
	&driver_attr_del_device.attr,
	&driver_attr_link_device.attr,
	&driver_attr_unlink_device.attr,
	NULL,
};

static const struct attribute_group gnsim_driver_group = {
	.attrs = gnsim_driver_attrs,
};

static const struct attribute_group *gnsim_driver_groups[] = {
	&gnsim_driver_group,
	NULL,
};

/*
 * The emulator's own platform driver: it binds to nothing, its directory
 * /sys/bus/platform/drivers/gaudi_nic_sim holds the control files.
 */
static int gnsim_probe(struct platform_device *pdev)
{
	return -ENODEV;
}

static struct platform_driver gnsim_platform_driver = {
	.driver = {
		.name = "gaudi_nic_sim",
		.groups = gnsim_driver_groups,
		.suppress_bind_attrs = true,
	},
	.probe = gnsim_probe,
};

static void gnsim_cleanup(void)
{
	gnsim_shutdown();
	/*
	 * Unregistering a device unbound the driver; user space references
	 * (files, mappings, dma-bufs) pin this module, but the driver's last
	 * calls (hbm_discard, release) may still be on their way: wait.
	 */
	if (atomic_read(&gnsim_live))
		pr_info("gaudi_nic_sim: waiting for users of removed devices\n");
	wait_var_event(&gnsim_live, !atomic_read(&gnsim_live));
	/* Let the RCU callbacks of released devices finish. */
	rcu_barrier();
	WARN_ON(!xa_empty(&gnsim_windows));
	debugfs_remove_recursive(gnsim_debugfs_root);
	gnsim_debugfs_root = NULL;
}

static int __init gnsim_init(void)
{
	unsigned int i;
	int ret;

	while (!host_id)
		host_id = get_random_u32();
	ret = gnsim_uplink_init();
	if (ret)
		return ret;
	ret = platform_driver_register(&gnsim_platform_driver);
	if (ret) {
		gnsim_uplink_exit();
		return ret;
	}
	for (i = 0; i < num_devices; i++) {
		ret = gnsim_new_device(i, GNSIM_DEFAULT_PORTS,
				       GNSIM_DEFAULT_HBM_MB);
		if (ret) {
			gnsim_cleanup();
			platform_driver_unregister(&gnsim_platform_driver);
			gnsim_uplink_exit();
			return ret;
		}
	}
	return 0;
}

static void __exit gnsim_exit(void)
{
	platform_driver_unregister(&gnsim_platform_driver);
	gnsim_cleanup();
	gnsim_uplink_exit();
}

module_init(gnsim_init);
module_exit(gnsim_exit);

MODULE_DESCRIPTION("gaudi_nic emulated ASIC: gaudi_nic.N platform devices");
MODULE_LICENSE("GPL");
