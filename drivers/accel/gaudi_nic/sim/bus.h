/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The emulated bus fabric, for test modules that play a peer device
 * (tests/kmod/gaudi_nic_test_importer.c): symbols of gaudi_nic_sim.ko,
 * namespace GAUDI_NIC_SIM.  No driver uses them: on silicon the fabric is
 * PCIe, and a peer reaches HBM through the dma-buf's DMA addresses.
 *
 * Any address inside any live device's HBM window resolves, whether or
 * not the pages are allocated; callers own the right to touch it (e.g.
 * through a dma-buf attachment, which pins the allocation).  Both copy
 * @len bytes and return 0, or -EFAULT if no window covers an address.
 */
#ifndef _GAUDI_NIC_SIM_BUS_H
#define _GAUDI_NIC_SIM_BUS_H

#include <linux/bits.h>
#include <linux/types.h>

/*
 * Emulated bus addresses: device N's HBM is visible at
 * GNSIM_BUS_BASE + N * GNSIM_BUS_WINDOW (a fake BAR per device).  Every
 * gaudi_nic device can reach every window (peer-to-peer).
 */
#define GNSIM_BUS_BASE			0x0000400000000000ULL
#define GNSIM_BUS_WINDOW		BIT_ULL(40)

int gnsim_bus_read(u64 bus_addr, void *dst, size_t len);
int gnsim_bus_write(u64 bus_addr, const void *src, size_t len);

struct page;
/*
 * Within gaudi_nic_sim.ko (not exported; the engine's DMA): the backing
 * page of @bus_addr with a reference (put_page() it) and the offset of
 * @bus_addr in it, or ERR_PTR(-EFAULT) if no window covers the address.
 */
struct page *gnsim_bus_get_page(u64 bus_addr, unsigned int *offset);

#endif /* _GAUDI_NIC_SIM_BUS_H */
