// SPDX-License-Identifier: GPL-2.0
/*
 * Emulated gaudi_nic devices: creation and removal through the driver's
 * sysfs files new_device / del_device, the HBM page pool, and the bus
 * address windows through which every device reaches every HBM.
 */
#include <linux/debugfs.h>
#include <linux/device.h>
#include <linux/dma-mapping.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/platform_device.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/xarray.h>

#include "sim.h"
#include "mac.h"
#include "roce.h"

/* Device id -> struct gn_sim_dev, from creation until the last reference. */
static DEFINE_XARRAY(gn_sim_windows);
/* Serialises new_device, del_device and shutdown. */
static DEFINE_MUTEX(gn_sim_lock);
static bool gn_sim_stopping;
static const struct gaudi_nic_hw_ops gn_sim_hw_ops;
/* debugfs gaudi_nic_sim/: a directory per device, under gn_sim_lock */
static struct dentry *gn_sim_debugfs_root;

static void gn_sim_get(struct gn_sim_dev *sim)
{
	kref_get(&sim->ref);
}

static void gn_sim_free_rcu(struct rcu_head *rcu)
{
	struct gn_sim_dev *sim = container_of(rcu, struct gn_sim_dev, rcu);
	unsigned long i;

	kfree(sim->macs);
	for (i = 0; i < sim->nframes; i++)
		if (sim->frames[i])
			__free_page(sim->frames[i]);
	kvfree(sim->frames);
	kfree(sim);
}

static void gn_sim_release(struct kref *ref)
{
	struct gn_sim_dev *sim = container_of(ref, struct gn_sim_dev, ref);

	xa_erase(&gn_sim_windows, sim->hw.id);
	/* Bus translations look the device up under RCU. */
	call_rcu(&sim->rcu, gn_sim_free_rcu);
}

static void gn_sim_put(struct gn_sim_dev *sim)
{
	kref_put(&sim->ref, gn_sim_release);
}

int gn_sim_new_device(u32 id, u32 ports, u32 hbm_mb)
{
	struct platform_device_info info = {
		.name = GAUDI_NIC_DRV_NAME,
		.id = id,
		.dma_mask = DMA_BIT_MASK(64),
		.size_data = sizeof(struct gaudi_nic_hw *),
	};
	struct gaudi_nic_hw *pdata;
	struct platform_device *pdev;
	struct gn_sim_dev *sim;
	char name[32];
	int ret;

	if (id >= GAUDI_NIC_MAX_DEVICES || ports > GAUDI_NIC_MAX_PORTS ||
	    !hbm_mb || hbm_mb > GAUDI_NIC_MAX_HBM_MB)
		return -EINVAL;

	sim = kzalloc(sizeof(*sim), GFP_KERNEL);
	if (!sim)
		return -ENOMEM;
	kref_init(&sim->ref);
	spin_lock_init(&sim->lock);
	sim->hw.ops = &gn_sim_hw_ops;
	sim->hw.mac_ops = &gnsim_mac_ops;
	sim->hw.id = id;
	sim->hw.num_ports = ports;
	sim->hw.hbm_size = (u64)hbm_mb << 20;
	sim->nframes = sim->hw.hbm_size >> PAGE_SHIFT;
	sim->hw.bus_base = GAUDI_NIC_BUS_BASE + (u64)id * GAUDI_NIC_BUS_WINDOW;
	snprintf(sim->hw.serial, sizeof(sim->hw.serial), "GNSIM%04u%08X", id,
		 (u32)(sim->hw.bus_base >> 32) ^ (hbm_mb << 8) ^ ports);
	sim->frames = kvcalloc(sim->nframes, sizeof(*sim->frames), GFP_KERNEL);
	sim->macs = kcalloc(ports, sizeof(*sim->macs), GFP_KERNEL);
	if (!sim->frames || !sim->macs) {
		kvfree(sim->frames);
		kfree(sim->macs);
		kfree(sim);
		return -ENOMEM;
	}

	mutex_lock(&gn_sim_lock);
	if (gn_sim_stopping) {
		ret = -ENODEV;
		goto err_unlock;
	}
	ret = xa_insert(&gn_sim_windows, id, sim, GFP_KERNEL);
	if (ret) {
		struct gn_sim_dev *old = xa_load(&gn_sim_windows, id);

		/* -EBUSY: id deleted, but its memory is still referenced */
		ret = (ret == -EBUSY && old && old->pdev) ? -EEXIST : ret;
		goto err_unlock;
	}
	if (!gn_sim_debugfs_root)
		gn_sim_debugfs_root = debugfs_create_dir("gaudi_nic_sim", NULL);
	snprintf(name, sizeof(name), "%s.%u", GAUDI_NIC_DRV_NAME, id);
	sim->debugfs = debugfs_create_dir(name, gn_sim_debugfs_root);
	pdata = &sim->hw;
	info.data = &pdata;
	pdev = platform_device_register_full(&info);
	if (IS_ERR(pdev)) {
		ret = PTR_ERR(pdev);
		debugfs_remove_recursive(sim->debugfs);
		xa_erase(&gn_sim_windows, id);
		goto err_unlock;
	}
	sim->pdev = pdev;
	mutex_unlock(&gn_sim_lock);
	return 0;

err_unlock:
	mutex_unlock(&gn_sim_lock);
	kvfree(sim->frames);
	kfree(sim->macs);
	kfree(sim);
	return ret;
}

static void gn_sim_unplug(struct gn_sim_dev *sim)
{
	struct platform_device *pdev = sim->pdev;

	lockdep_assert_held(&gn_sim_lock);
	sim->pdev = NULL;
	platform_device_unregister(pdev);
	/* unbound: the MACs, and with them their knobs, are gone */
	debugfs_remove_recursive(sim->debugfs);
	sim->debugfs = NULL;
	gn_sim_put(sim);
}

int gn_sim_del_device(u32 id)
{
	struct gn_sim_dev *sim;
	int ret = -ENOENT;

	mutex_lock(&gn_sim_lock);
	sim = xa_load(&gn_sim_windows, id);
	if (sim && sim->pdev) {
		gn_sim_unplug(sim);
		ret = 0;
	}
	mutex_unlock(&gn_sim_lock);
	return ret;
}

/* Remove every device; no new ones can be created afterwards. */
void gn_sim_shutdown(void)
{
	struct gn_sim_dev *sim;
	unsigned long id;

	mutex_lock(&gn_sim_lock);
	gn_sim_stopping = true;
	xa_for_each(&gn_sim_windows, id, sim)
		if (sim->pdev)
			gn_sim_unplug(sim);
	mutex_unlock(&gn_sim_lock);
}

void gn_sim_exit(void)
{
	/* Let the RCU callbacks of released devices finish. */
	rcu_barrier();
	WARN_ON(!xa_empty(&gn_sim_windows));
	debugfs_remove_recursive(gn_sim_debugfs_root);
	gn_sim_debugfs_root = NULL;
}

static void gn_sim_hbm_discard(struct gaudi_nic_hw *hw, unsigned long frame,
			       unsigned long n)
{
	struct gn_sim_dev *sim = to_gn_sim_dev(hw);
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

static int gn_sim_hbm_populate(struct gaudi_nic_hw *hw, unsigned long frame,
			       unsigned long n)
{
	struct gn_sim_dev *sim = to_gn_sim_dev(hw);
	unsigned long i;

	if (frame > sim->nframes || n > sim->nframes - frame)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		struct page *page = alloc_page(GFP_KERNEL | __GFP_ZERO);

		if (!page) {
			gn_sim_hbm_discard(hw, frame, i);
			return -ENOMEM;
		}
		spin_lock_bh(&sim->lock);
		WARN_ON_ONCE(sim->frames[frame + i]);
		sim->frames[frame + i] = page;
		spin_unlock_bh(&sim->lock);
	}
	return 0;
}

static struct page *gn_sim_page(struct gn_sim_dev *sim, unsigned long frame)
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

static struct page *gn_sim_hbm_get_page(struct gaudi_nic_hw *hw,
					unsigned long frame)
{
	return gn_sim_page(to_gn_sim_dev(hw), frame);
}

/* One driver instance at a time; it holds a reference until it lets go. */
static int gn_sim_claim(struct gaudi_nic_hw *hw)
{
	struct gn_sim_dev *sim = to_gn_sim_dev(hw);

	if (atomic_cmpxchg(&sim->claimed, 0, 1))
		return -EBUSY;
	gn_sim_get(sim);
	return 0;
}

static void gn_sim_release_hw(struct gaudi_nic_hw *hw)
{
	struct gn_sim_dev *sim = to_gn_sim_dev(hw);

	atomic_set(&sim->claimed, 0);
	gn_sim_put(sim);
}

static struct gn_mac *gn_sim_mac_create(struct gaudi_nic_hw *hw,
					struct device *dma_dev,
					unsigned int port)
{
	struct gn_sim_dev *sim = to_gn_sim_dev(hw);
	struct gn_mac *mac;

	if (port >= hw->num_ports)
		return NULL;
	mac = gn_mac_create(dma_dev, port, sim->debugfs);
	if (mac) {
		rtnl_lock();
		sim->macs[port] = mac;
		rtnl_unlock();
	}
	return mac;
}

static void gn_sim_mac_destroy(struct gaudi_nic_hw *hw, struct gn_mac *mac)
{
	struct gn_sim_dev *sim = to_gn_sim_dev(hw);
	u32 p;

	rtnl_lock();
	for (p = 0; p < hw->num_ports; p++)
		if (sim->macs[p] == mac)
			sim->macs[p] = NULL;
	rtnl_unlock();
	gn_mac_destroy(mac);
}

/*
 * The MAC behind a netdev, from the device model alone (netdevsim's bus
 * asks its netdevs no more): a port's netdev descends from one of our
 * platform devices, and its dev_port is the port.  Under RTNL, so a
 * registered @nd keeps its driver, and with it the MACs, bound.
 */
struct gn_mac *gn_sim_netdev_mac(struct net_device *nd)
{
	struct gn_mac *mac = NULL;
	struct platform_device *pdev;
	struct gn_sim_dev *sim;
	struct device *d;

	ASSERT_RTNL();
	for (d = nd->dev.parent; d && !dev_is_platform(d); d = d->parent)
		;
	if (!d)
		return NULL;
	pdev = to_platform_device(d);
	if (strcmp(pdev->name, GAUDI_NIC_DRV_NAME) || pdev->id < 0)
		return NULL;
	rcu_read_lock();
	sim = xa_load(&gn_sim_windows, pdev->id);
	if (sim && gaudi_nic_hw_of(&pdev->dev) == &sim->hw &&
	    nd->dev_port < sim->hw.num_ports)
		mac = sim->macs[nd->dev_port];
	rcu_read_unlock();
	return mac;
}

static struct gaudi_nic_roce *gn_sim_roce_create(struct gaudi_nic_hw *hw,
						 struct device *dma_dev,
						 struct gn_mac *const *macs)
{
	return gn_roce_create(dma_dev, hw->id, macs, hw->num_ports);
}

static const struct gaudi_nic_hw_ops gn_sim_hw_ops = {
	.claim = gn_sim_claim,
	.release = gn_sim_release_hw,
	.hbm_populate = gn_sim_hbm_populate,
	.hbm_discard = gn_sim_hbm_discard,
	.hbm_get_page = gn_sim_hbm_get_page,
	.mac_create = gn_sim_mac_create,
	.mac_destroy = gn_sim_mac_destroy,
	.roce_create = gn_sim_roce_create,
	.roce_destroy = gn_roce_destroy,
};

/* ------------------------------------------------------- bus addresses */

struct page *gaudi_nic_bus_get_page(u64 bus_addr, unsigned int *offset)
{
	struct gn_sim_dev *sim;
	struct page *page = NULL;
	u64 id, off;

	if (bus_addr < GAUDI_NIC_BUS_BASE)
		return ERR_PTR(-EFAULT);
	id = (bus_addr - GAUDI_NIC_BUS_BASE) / GAUDI_NIC_BUS_WINDOW;
	off = (bus_addr - GAUDI_NIC_BUS_BASE) % GAUDI_NIC_BUS_WINDOW;
	if (id >= GAUDI_NIC_MAX_DEVICES)
		return ERR_PTR(-EFAULT);

	rcu_read_lock();
	sim = xa_load(&gn_sim_windows, id);
	if (sim && off < sim->hw.hbm_size)
		page = gn_sim_page(sim, off >> PAGE_SHIFT);
	rcu_read_unlock();
	if (!page)
		return ERR_PTR(-EFAULT);
	*offset = offset_in_page(off);
	return page;
}
EXPORT_SYMBOL_NS_GPL(gaudi_nic_bus_get_page, GAUDI_NIC);

static int gn_bus_copy(u64 bus_addr, void *buf, size_t len, bool write)
{
	while (len) {
		unsigned int off;
		struct page *page = gaudi_nic_bus_get_page(bus_addr, &off);
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

int gaudi_nic_bus_read(u64 bus_addr, void *dst, size_t len)
{
	return gn_bus_copy(bus_addr, dst, len, false);
}
EXPORT_SYMBOL_NS_GPL(gaudi_nic_bus_read, GAUDI_NIC);

int gaudi_nic_bus_write(u64 bus_addr, const void *src, size_t len)
{
	return gn_bus_copy(bus_addr, (void *)src, len, true);
}
EXPORT_SYMBOL_NS_GPL(gaudi_nic_bus_write, GAUDI_NIC);

/* ------------------------------------------------- sysfs control files */

static ssize_t new_device_store(struct device_driver *drv, const char *buf,
				size_t count)
{
	unsigned int id, ports = GAUDI_NIC_DEFAULT_PORTS;
	unsigned int hbm_mb = GAUDI_NIC_DEFAULT_HBM_MB;
	char extra;
	int n, ret;

	n = sscanf(buf, "%u %u %u %c", &id, &ports, &hbm_mb, &extra);
	if (n < 1 || n > 3)
		return -EINVAL;
	ret = gn_sim_new_device(id, ports, hbm_mb);
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
	ret = gn_sim_del_device(id);
	return ret ? ret : count;
}
static DRIVER_ATTR_WO(del_device);

static struct attribute *gn_sim_driver_attrs[] = {
	&driver_attr_new_device.attr,
	&driver_attr_del_device.attr,
	&driver_attr_link_device.attr,
	&driver_attr_unlink_device.attr,
	NULL,
};

static const struct attribute_group gn_sim_driver_group = {
	.attrs = gn_sim_driver_attrs,
};

const struct attribute_group *gn_sim_driver_groups[] = {
	&gn_sim_driver_group,
	NULL,
};
