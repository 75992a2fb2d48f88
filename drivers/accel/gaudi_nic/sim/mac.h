/* SPDX-License-Identifier: GPL-2.0 */
/* The emulated MACs and cables: private to gaudi_nic.ko. */
#ifndef _GAUDI_NIC_SIM_MAC_H
#define _GAUDI_NIC_SIM_MAC_H

#include <linux/gaudi_nic/port.h>

struct net_device;
struct device_driver;

struct gn_mac *gn_mac_create(struct device *dma_dev, unsigned int port);
void gn_mac_destroy(struct gn_mac *mac);

/* Cables (under RTNL). */
int gn_mac_link(struct gn_mac *a, struct gn_mac *b);
int gn_mac_unlink(struct gn_mac *mac);
struct gn_mac *gn_mac_peer(struct gn_mac *mac);

/*
 * sim/roce_dp.c: write the ICRC (and, over IPv6, the UDP checksum) of a
 * RoCE v2 frame sent with GN_MAC_ROCE_ICRC_INSERT, once its bytes are seen.
 */
void gn_roce_icrc_insert(u8 *frame, unsigned int len);

/* sim/cable.c: sysfs link_device / unlink_device (driver attributes). */
extern struct driver_attribute driver_attr_link_device;
extern struct driver_attribute driver_attr_unlink_device;

#endif /* _GAUDI_NIC_SIM_MAC_H */
