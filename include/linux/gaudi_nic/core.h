/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gaudi_nic core contract: what gaudi_nic.ko's core offers to the rest of
 * the module (NIC core, Ethernet auxiliary driver) and, through symbols
 * exported in the GAUDI_NIC namespace, to other modules (gaudi_ib, tests).
 */
#ifndef _LINUX_GAUDI_NIC_CORE_H
#define _LINUX_GAUDI_NIC_CORE_H

#include <linux/auxiliary_bus.h>
#include <linux/bits.h>
#include <linux/jhash.h>
#include <linux/types.h>
#include <drm/drm_device.h>
#include <linux/gaudi_nic/roce_hw.h>

#define GAUDI_NIC_DRV_NAME		"gaudi_nic"
/* ports a device may have: a larger one fails to probe */
#define GAUDI_NIC_MAX_PORTS		24
#define GAUDI_NIC_SERIAL_MAX		32

struct gaudi_nic_hw;
struct gn_mem;
struct gn_nic;
struct platform_device;

/*
 * What one user context of the device's RDMA function may hold: objects
 * of each kind, and MiB of queue rings (GAUDI_NIC_CTX_RING_MB); 0 is no
 * limit.  The core keeps them as the devlink params max_<kind>_per_ctx
 * (runtime) of the device; gaudi_ib reads them (READ_ONCE()) at each
 * creation, so a new value applies to the next object.
 */
enum gaudi_nic_ctx_limit {
	GAUDI_NIC_CTX_PD,
	GAUDI_NIC_CTX_CQ,
	GAUDI_NIC_CTX_QP,
	GAUDI_NIC_CTX_SRQ,
	GAUDI_NIC_CTX_MR,
	GAUDI_NIC_CTX_AH,
	GAUDI_NIC_CTX_MW,
	GAUDI_NIC_CTX_DM,
	GAUDI_NIC_CTX_RING_MB,
	GAUDI_NIC_CTX_LIMITS
};

/**
 * struct gaudi_nic_dev - one gaudi_nic device, as the core driver sees it
 * @drm: the DRM accel device (/dev/accel/accelN); its refcount is the
 *	lifetime of this structure
 * @pdev: the platform device; &pdev->dev is also the DMA device (64-bit
 *	mask, dma_parms) to use for dma-buf attachments and ib_device
 * @id: device index N (platform device gaudi_nic.N)
 * @num_ports: NIC ports of this device
 * @serial: serial number, NUL-terminated
 * @hbm_size: HBM bytes
 * @bus_base: first bus address of this device's HBM window
 * @hw: the hardware description and ops (<linux/gaudi_nic/hw.h>), from
 *	the platform data; valid while the DRM device lives.  @id through
 *	@bus_base are read from it once, in probe, as a PCI driver reads
 *	its device's configuration space; after probe the core and its
 *	aux drivers (which do not see hw.h) use only these copies.
 * @mem: the memory manager (private to the core)
 * @nic: the NIC core (ports, auxiliary devices); private to gaudi_nic.ko
 * @ctx_max: the per-context limits of the RDMA function, by
 *	&enum gaudi_nic_ctx_limit (devlink params; read with READ_ONCE())
 */
struct gaudi_nic_dev {
	struct drm_device drm;
	struct platform_device *pdev;
	u32 id;
	u32 num_ports;
	char serial[GAUDI_NIC_SERIAL_MAX];
	u64 hbm_size;
	u64 bus_base;
	struct gaudi_nic_hw *hw;
	struct gn_mem *mem;
	struct gn_nic *nic;
	u32 ctx_max[GAUDI_NIC_CTX_LIMITS];
};

/*
 * A 32-bit hash of the device's serial number, unique per board as the
 * serial is: the ports' MAC addresses (02:<hash>:<port>) and the RDMA node
 * GUID (the EUI-64 of port 0's MAC) derive from it.
 */
static inline u32 gaudi_nic_serial_hash(const struct gaudi_nic_dev *gdev)
{
	return jhash(gdev->serial, strnlen(gdev->serial, sizeof(gdev->serial)),
		     0x676e6963);
}

static inline struct gaudi_nic_dev *to_gaudi_nic_dev(struct drm_device *drm)
{
	return container_of(drm, struct gaudi_nic_dev, drm);
}

/**
 * struct gaudi_nic_adev - an auxiliary device of a gaudi_nic device
 * @adev: gaudi_nic.eth.N (the ports' Ethernet function) or gaudi_nic.rdma.N
 *	(the RDMA function, spawned for a device with a RoCE engine)
 * @gdev: the device; valid while the aux device is bound
 * @roce: gaudi_nic.rdma.N only: the RoCE engine (<linux/gaudi_nic/roce_hw.h>)
 * @roce_ops: gaudi_nic.rdma.N only: the engine's ops, from the hardware
 *	description, so the RDMA driver imports nothing from the module that
 *	implements the engine
 *
 * One container for every function, as mlx5_adev is.  Lifetime: from the
 * core's probe (or a devlink reload) to its remove; the driver bound to
 * gaudi_nic.rdma.N must stop using @roce (gaudi_nic_roce_disable()) in
 * its .remove.
 */
struct gaudi_nic_adev {
	struct auxiliary_device adev;
	struct gaudi_nic_dev *gdev;
	struct gaudi_nic_roce *roce;
	const struct gaudi_nic_roce_ops *roce_ops;
};

static inline struct gaudi_nic_adev *
to_gaudi_nic_adev(struct auxiliary_device *adev)
{
	return container_of(adev, struct gaudi_nic_adev, adev);
}

/* The engine of gaudi_nic.rdma.N, through its ops (struct gaudi_nic_roce_ops). */
static inline int gaudi_nic_roce_enable(const struct gaudi_nic_adev *ga,
					gn_roce_event_fn fn, void *priv)
{
	return ga->roce_ops->enable(ga->roce, fn, priv);
}

static inline void gaudi_nic_roce_disable(const struct gaudi_nic_adev *ga)
{
	ga->roce_ops->disable(ga->roce);
}

static inline int gaudi_nic_roce_cmd(const struct gaudi_nic_adev *ga, u32 op,
				     u32 index, const void *in, size_t in_len,
				     void *out, size_t out_len)
{
	return ga->roce_ops->cmd(ga->roce, op, index, in, in_len, out,
				 out_len);
}

static inline void gaudi_nic_roce_doorbell(const struct gaudi_nic_adev *ga,
					   u32 db)
{
	ga->roce_ops->doorbell(ga->roce, db);
}

struct net_device;

/*
 * The NIC ports' netdevs, as the Ethernet driver registered them, kept
 * under RTNL (whatever namespace they are in).  gaudi_nic_port_netdev():
 * the netdev of @port with a reference (dev_put() it), or NULL.
 * gaudi_nic_port_of(): the port @nd is, or -ENOENT if it is none of
 * @gdev's.  Both under RTNL: a netdevice notifier asks the latter for the
 * netdev of each event.
 */
struct net_device *gaudi_nic_port_netdev(struct gaudi_nic_dev *gdev,
					 u32 port);
int gaudi_nic_port_of(struct gaudi_nic_dev *gdev, struct net_device *nd);

/*
 * HBM held by the device's other functions, as the RDMA driver's device
 * memory (ibv_alloc_dm()) is: out of the frames accel contexts allocate
 * from, zeroed, in PAGE_SIZE frames that need not be contiguous.
 * gaudi_nic_hbm_alloc(): @size bytes rounded up to PAGE_SIZE; -EINVAL for
 * 0 or more than the HBM, -ENOMEM when the HBM is full, -ENODEV once the
 * device is being removed.  Process context.
 * gaudi_nic_hbm_free(): the frames go back scrubbed; a page still
 * referenced (gaudi_nic_hbm_page()) stays with its holder, apart from the
 * HBM.  Safe after the device was removed.
 * gaudi_nic_hbm_bus(): the bus address of byte @offset (the device's
 * engines reach it there, as they reach an exported HBM dma-buf).
 * gaudi_nic_hbm_page(): the page backing byte @offset, with a reference
 * (put_page() it), for a CPU mapping; NULL past the end or once the device
 * is being removed.
 */
struct gaudi_nic_hbm;
struct page;

struct gaudi_nic_hbm *gaudi_nic_hbm_alloc(struct gaudi_nic_dev *gdev,
					  u64 size);
void gaudi_nic_hbm_free(struct gaudi_nic_hbm *hbm);
u64 gaudi_nic_hbm_size(const struct gaudi_nic_hbm *hbm);
u64 gaudi_nic_hbm_bus(const struct gaudi_nic_hbm *hbm, u64 offset);
struct page *gaudi_nic_hbm_page(const struct gaudi_nic_hbm *hbm, u64 offset);

#endif /* _LINUX_GAUDI_NIC_CORE_H */
