/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gaudi_nic hardware description: what the core driver is handed for each
 * device (the platform data of the gaudi_nic.N platform device) and the
 * only way it reaches the hardware.  The emulator (sim/) fills one per
 * emulated device (gaudi_nic_sim.ko registers the platform devices);
 * silicon would be a second implementation of the ops, registering its
 * own platform or PCI device.
 */
#ifndef _LINUX_GAUDI_NIC_HW_H
#define _LINUX_GAUDI_NIC_HW_H

#include <linux/device.h>
#include <linux/module.h>
#include <linux/types.h>

/*
 * The name of the platform devices (gaudi_nic.N) an implementation of
 * this description registers, which the core driver binds.
 */
#define GAUDI_NIC_HW_NAME		"gaudi_nic"
#define GAUDI_NIC_HW_SERIAL_MAX		32

struct page;
struct gn_mac;
struct gaudi_nic_hw;
struct gaudi_nic_mac_ops;
struct gaudi_nic_roce;
struct gaudi_nic_roce_ops;

/**
 * struct gaudi_nic_hw_ops - the device, as the core driver programs it
 * @claim: a driver instance takes the device (probe); -EBUSY while an
 *	earlier one still holds it (its memory is still referenced).  The
 *	description stays valid until @release.
 * @release: the instance lets go (last reference on its DRM device)
 * @hbm_populate: back HBM frames @frame .. @frame + @n - 1 with zeroed
 *	memory; -EINVAL beyond the HBM, -ENOMEM.  Frames are PAGE_SIZE.
 * @hbm_discard: drop the backing of those frames (holders of a page
 *	reference keep it)
 * @hbm_get_page: the backing page of @frame with a reference, or NULL if
 *	the frame is beyond the HBM or not populated
 * @mac_create: the MAC of port @port, doing DMA as @dma_dev (the platform
 *	device); NULL if out of memory.  Process context.
 * @mac_destroy: undo @mac_create; unplugs the port's cable
 * @roce_create: the RoCE engine (roce_hw.h), doing DMA as @dma_dev, its
 *	port p wired to @macs[p] (one per port); NULL if the device has
 *	none, or an ERR_PTR.  Process context.
 * @roce_destroy: stop and free the engine; no driver uses it any more
 */
struct gaudi_nic_hw_ops {
	int (*claim)(struct gaudi_nic_hw *hw);
	void (*release)(struct gaudi_nic_hw *hw);
	int (*hbm_populate)(struct gaudi_nic_hw *hw, unsigned long frame,
			    unsigned long n);
	void (*hbm_discard)(struct gaudi_nic_hw *hw, unsigned long frame,
			    unsigned long n);
	struct page *(*hbm_get_page)(struct gaudi_nic_hw *hw,
				     unsigned long frame);
	struct gn_mac *(*mac_create)(struct gaudi_nic_hw *hw,
				     struct device *dma_dev, unsigned int port);
	void (*mac_destroy)(struct gaudi_nic_hw *hw, struct gn_mac *mac);
	struct gaudi_nic_roce *(*roce_create)(struct gaudi_nic_hw *hw,
					      struct device *dma_dev,
					      struct gn_mac *const *macs);
	void (*roce_destroy)(struct gaudi_nic_roce *roce);
};

/**
 * struct gaudi_nic_hw - one device, as the hardware describes it
 * @ops: how the core reaches it
 * @mac_ops: how the drivers reach its MACs (port.h)
 * @roce_ops: how the RDMA driver reaches its RoCE engine (roce_hw.h),
 *	handed over with the gaudi_nic.rdma.N aux device
 * @owner: the module that implements the ops; the driver holds a
 *	reference on it while user space holds the device (an open file, a
 *	mapping, a dma-buf), so that module cannot go from under them
 * @id: device index N
 * @num_ports: NIC ports (the core driver takes at most
 *	GAUDI_NIC_MAX_PORTS)
 * @hbm_size: HBM bytes (a multiple of PAGE_SIZE)
 * @bus_base: first bus address of the HBM window
 * @serial: serial number, NUL-terminated
 * @asic_id: what the ASIC is (devlink info asic.id)
 * @asic_rev: its revision (asic.rev)
 * @fw_version: the firmware running on it (devlink info fw, ethtool -i);
 *	the three are required: a device without them fails to probe
 */
struct gaudi_nic_hw {
	const struct gaudi_nic_hw_ops *ops;
	const struct gaudi_nic_mac_ops *mac_ops;
	const struct gaudi_nic_roce_ops *roce_ops;
	struct module *owner;
	u32 id;
	u32 num_ports;
	u64 hbm_size;
	u64 bus_base;
	char serial[GAUDI_NIC_HW_SERIAL_MAX];
	const char *asic_id;
	const char *asic_rev;
	const char *fw_version;
};

/* The description of a gaudi_nic platform device (its platform data). */
static inline struct gaudi_nic_hw *gaudi_nic_hw_of(struct device *dev)
{
	struct gaudi_nic_hw **pd = dev_get_platdata(dev);

	return pd ? *pd : NULL;
}

#endif /* _LINUX_GAUDI_NIC_HW_H */
