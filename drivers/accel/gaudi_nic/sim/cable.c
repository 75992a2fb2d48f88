// SPDX-License-Identifier: GPL-2.0
/*
 * Cables between emulated ports: the sysfs control files
 * /sys/bus/platform/drivers/gaudi_nic/link_device and unlink_device.
 *
 * Format as netdevsim's: "netnsfd_a:ifindex_a netnsfd_b:ifindex_b" to link,
 * "netnsfd:ifindex" (either end) to unlink.  The fds are network namespace
 * file descriptors of the writing process (e.g. /run/netns/NAME opened by
 * the shell).
 */
#include <linux/device/driver.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/sysfs.h>
#include <net/net_namespace.h>
#include "mac.h"
#include "sim.h"

/* Under RTNL: the MAC of port @ifindex in @netnsfd's namespace. */
static struct gn_mac *gn_cable_lookup(const char *op, int netnsfd,
				      int ifindex, struct net_device **ndev)
{
	struct net_device *dev;
	struct gn_mac *mac;
	struct net *net;

	ASSERT_RTNL();
	net = get_net_ns_by_fd(netnsfd);
	if (IS_ERR(net)) {
		pr_err("gaudi_nic: %s: fd %d is not a network namespace\n",
		       op, netnsfd);
		return ERR_PTR(-EINVAL);
	}
	dev = __dev_get_by_index(net, ifindex);
	put_net(net);
	if (!dev) {
		pr_err("gaudi_nic: %s: no interface with ifindex %d in that namespace\n",
		       op, ifindex);
		return ERR_PTR(-ENODEV);
	}
	mac = gnsim_netdev_mac(dev);
	if (!mac) {
		pr_err("gaudi_nic: %s: %s is not a gaudi_nic port\n",
		       op, dev->name);
		return ERR_PTR(-EINVAL);
	}
	*ndev = dev;
	return mac;
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
	a = gn_cable_lookup("link_device", fd_a, if_a, &dev_a);
	if (IS_ERR(a)) {
		ret = PTR_ERR(a);
		goto out;
	}
	b = gn_cable_lookup("link_device", fd_b, if_b, &dev_b);
	if (IS_ERR(b)) {
		ret = PTR_ERR(b);
		goto out;
	}
	if (a == b) {
		pr_err("gaudi_nic: link_device: cannot link %s to itself\n",
		       dev_a->name);
		ret = -EINVAL;
		goto out;
	}
	ret = gnsim_mac_link(a, b);
	if (ret == -EBUSY)
		pr_err("gaudi_nic: link_device: %s is already linked\n",
		       gnsim_mac_peer(a) ? dev_a->name : dev_b->name);
	else if (!ret)
		pr_info("gaudi_nic: linked %s and %s\n", dev_a->name,
			dev_b->name);
out:
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
	mac = gn_cable_lookup("unlink_device", fd, ifindex, &dev);
	if (IS_ERR(mac)) {
		ret = PTR_ERR(mac);
	} else {
		ret = gnsim_mac_unlink(mac);
		if (ret)
			pr_err("gaudi_nic: unlink_device: %s is not linked\n",
			       dev->name);
	}
	rtnl_unlock();
	return ret ? ret : count;
}
DRIVER_ATTR_WO(unlink_device);
