// SPDX-License-Identifier: GPL-2.0
/*
 * Cables between emulated ports: the sysfs control files
 * /sys/bus/platform/drivers/gaudi_nic/link_device and unlink_device.
 *
 * Format as netdevsim's: "netnsfd_a:ifindex_a netnsfd_b:ifindex_b" to link,
 * "netnsfd:ifindex" (either end) to unlink.  The fds are network namespace
 * file descriptors of the writing process (e.g. /run/netns/NAME opened by
 * the shell).  One end must be a gaudi_nic port.  If the other is a port
 * too, the cable joins the two MACs; if it is any other Ethernet netdev,
 * that netdev becomes the port's uplink (sim/uplink.c).
 */
#include <linux/device/driver.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/sysfs.h>
#include <net/net_namespace.h>
#include "mac.h"
#include "sim.h"

/*
 * Under RTNL: the netdev @ifindex in @netnsfd's namespace, in @ndev, and
 * its MAC if it is a gaudi_nic port (else NULL).
 */
static int gnsim_cable_lookup(const char *op, int netnsfd, int ifindex,
			      struct net_device **ndev, struct gn_mac **mac)
{
	struct net_device *dev;
	struct net *net;

	ASSERT_RTNL();
	net = get_net_ns_by_fd(netnsfd);
	if (IS_ERR(net)) {
		pr_err("gaudi_nic: %s: fd %d is not a network namespace\n",
		       op, netnsfd);
		return -EINVAL;
	}
	dev = __dev_get_by_index(net, ifindex);
	put_net(net);
	if (!dev) {
		pr_err("gaudi_nic: %s: no interface with ifindex %d in that namespace\n",
		       op, ifindex);
		return -ENODEV;
	}
	*ndev = dev;
	*mac = gnsim_netdev_mac(dev);
	return 0;
}

/* Under RTNL: a cable from port @a (netdev @dev_a) to @dev_b, its port @b. */
static int gnsim_cable_link(struct gn_mac *a, struct net_device *dev_a,
			    struct gn_mac *b, struct net_device *dev_b)
{
	int ret;

	if (!a && b) {
		swap(a, b);
		swap(dev_a, dev_b);
	}
	if (!a) {
		pr_err("gaudi_nic: link_device: neither %s nor %s is a gaudi_nic port\n",
		       dev_a->name, dev_b->name);
		return -EINVAL;
	}
	if (!b && !gnsim_uplink_ok(dev_b)) {
		pr_err("gaudi_nic: link_device: %s is neither a gaudi_nic port nor an Ethernet interface\n",
		       dev_b->name);
		return -EINVAL;
	}
	if (a == b) {
		pr_err("gaudi_nic: link_device: cannot link %s to itself\n",
		       dev_a->name);
		return -EINVAL;
	}
	if (b && gnsim_mac_linked(b)) {
		pr_err("gaudi_nic: link_device: %s is already linked\n",
		       dev_b->name);
		return -EBUSY;
	}
	if (gnsim_mac_linked(a)) {
		pr_err("gaudi_nic: link_device: %s is already linked\n",
		       dev_a->name);
		return -EBUSY;
	}
	if (!b && gnsim_uplink_mac(dev_b)) {
		pr_err("gaudi_nic: link_device: %s is already an uplink\n",
		       dev_b->name);
		return -EBUSY;
	}
	ret = b ? gnsim_mac_link(a, b) : gnsim_mac_uplink(a, dev_b);
	if (!ret)
		pr_info("gaudi_nic: linked %s and %s%s\n", dev_a->name,
			dev_b->name, b ? "" : " (uplink)");
	return ret;
}

static ssize_t link_device_store(struct device_driver *drv, const char *buf,
				 size_t count)
{
	int fd_a, if_a, fd_b, if_b, ret;
	struct net_device *dev_a, *dev_b;
	struct gn_mac *a, *b;
	char extra;

	if (sscanf(buf, "%d:%d %d:%d %c", &fd_a, &if_a, &fd_b, &if_b,
		   &extra) != 4) {
		pr_err("gaudi_nic: link_device: expected \"netnsfd_a:ifindex_a netnsfd_b:ifindex_b\", got \"%.*s\"\n",
		       (int)strcspn(buf, "\n"), buf);
		return -EINVAL;
	}
	rtnl_lock();
	ret = gnsim_cable_lookup("link_device", fd_a, if_a, &dev_a, &a);
	if (!ret)
		ret = gnsim_cable_lookup("link_device", fd_b, if_b, &dev_b, &b);
	if (!ret)
		ret = gnsim_cable_link(a, dev_a, b, dev_b);
	rtnl_unlock();
	return ret ? ret : count;
}
DRIVER_ATTR_WO(link_device);

static ssize_t unlink_device_store(struct device_driver *drv, const char *buf,
				   size_t count)
{
	struct net_device *dev;
	struct gn_mac *mac;
	int fd, ifindex, ret;
	char extra;

	if (sscanf(buf, "%d:%d %c", &fd, &ifindex, &extra) != 2) {
		pr_err("gaudi_nic: unlink_device: expected \"netnsfd:ifindex\", got \"%.*s\"\n",
		       (int)strcspn(buf, "\n"), buf);
		return -EINVAL;
	}
	rtnl_lock();
	ret = gnsim_cable_lookup("unlink_device", fd, ifindex, &dev, &mac);
	if (!ret) {
		/* either end: a port, or an uplink */
		if (!mac)
			mac = gnsim_uplink_mac(dev);
		if (!mac || gnsim_mac_unlink(mac)) {
			pr_err("gaudi_nic: unlink_device: %s is not linked\n",
			       dev->name);
			ret = mac ? -ENOENT : -EINVAL;
		}
	}
	rtnl_unlock();
	return ret ? ret : count;
}
DRIVER_ATTR_WO(unlink_device);
