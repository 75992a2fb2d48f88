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

#include <linux/types.h>

int gnsim_bus_read(u64 bus_addr, void *dst, size_t len);
int gnsim_bus_write(u64 bus_addr, const void *src, size_t len);

#endif /* _GAUDI_NIC_SIM_BUS_H */
