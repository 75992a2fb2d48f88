// SPDX-License-Identifier: GPL-2.0
/*
 * gn-fail-nth - every allocation on the path of a device call failed, one
 * at a time (issue 31, deliverable 4), with tests/lib/failnth.h's loop:
 * the accel driver's calls, a port's netdev operations, the creation of a
 * device and the cabling of two ports.  tests/rdma/fail_nth.c does the
 * same for the verbs creations.  Each call here is one system call of
 * this thread, with what it needs (files, sockets, handles) made before it
 * is armed, so that the faults land on the call's own path.
 *
 *   gn-fail-nth accel BUS_ID   (gaudi_nic.N)
 *	open of its accel node; GAUDI_NIC_MEM_ALLOC (64 KiB), MAP,
 *	EXPORT_DMABUF_FD; undone by close, FREE, UNMAP, close of the dma-buf
 *   gn-fail-nth net IFNAME     (a port, down, in this network namespace)
 *	SIOCSIFFLAGS IFF_UP, then with the port up SIOCSIFMTU and ethtool's
 *	SRINGPARAM; undone by IFF_UP cleared, the MTU and the rings back
 *   gn-fail-nth device ID [PORTS [HBM_MB]]
 *	new_device of gaudi_nic_sim: the platform device, and in the same
 *	write (the probes are synchronous) the accel driver's probe, the
 *	auxiliary devices and their drivers' probes: the netdevs and, with
 *	gaudi_ib loaded, the ib_device; undone by del_device
 *   gn-fail-nth link IF_A IF_B (two ports, uncabled, in this namespace)
 *	link_device; undone by unlink_device
 *
 * The driver core ignores a failed probe: new_device succeeds with the
 * platform device registered, but its driver or an auxiliary driver not
 * bound (no accel node, no netdev, no ib_device).  That is a fault
 * absorbed with the work half done, counted apart, and it passes only if
 * del_device then removes the device, and the same new_device without a
 * fault makes the whole device again.  The script checks that what the
 * program made is all gone afterwards (devices, netdevs, ib_devices, accel
 * nodes and memory objects), and the debug lane's watch that nothing
 * leaked (kmemleak) and nothing was reported (lockdep, KASAN, WARN).
 *
 * Output: TAP, one point per step.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>

#include <drm/gaudi_nic_accel.h>

#include "failnth.h"

#define SIMDRV	"/sys/bus/platform/drivers/gaudi_nic_sim/"
#define MEM_SIZE	(64 << 10)

/* ------------------------------------------------------------- accel */

static char accel_node[300];	/* /dev/accel/accelM of the device */
static int accel_fd = -1;	/* open for the memory steps */
static uint64_t mem_handle;	/* allocated for the map step */
static uint64_t mem_va;		/* mapped for the export step */

/* /dev/accel/accelM of platform device @bus: 0, or -1 */
static int accel_find(const char *bus)
{
	char path[PATH_MAX], link[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir("/sys/class/accel");
	ssize_t len;
	int ret = -1;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "accel", 5))
			continue;
		snprintf(path, sizeof(path), "/sys/class/accel/%s/device",
			 de->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = 0;
		if (strcmp(strrchr(link, '/') ? strrchr(link, '/') + 1 : link,
			   bus))
			continue;
		snprintf(accel_node, sizeof(accel_node), "/dev/accel/%s",
			 de->d_name);
		ret = 0;
		break;
	}
	closedir(d);
	return ret;
}

static int mem(int fd, struct drm_gaudi_nic_memory *a)
{
	return ioctl(fd, DRM_IOCTL_GAUDI_NIC_MEMORY, a) ? -1 : 0;
}

static int open_make(union fn_obj *o)
{
	o->v = open(accel_node, O_RDWR | O_CLOEXEC);
	return o->v < 0 ? -1 : 0;
}

static int fd_undo(union fn_obj o)
{
	return close(o.v);
}

static int alloc_make(union fn_obj *o)
{
	struct drm_gaudi_nic_memory a = { .op = GAUDI_NIC_MEM_ALLOC };

	a.in.alloc.size = MEM_SIZE;
	if (mem(accel_fd, &a))
		return -1;
	o->v = a.out.handle;
	return 0;
}

static int free_handle(uint64_t h)
{
	struct drm_gaudi_nic_memory a = { .op = GAUDI_NIC_MEM_FREE };

	a.in.free.handle = h;
	return mem(accel_fd, &a);
}

static int alloc_undo(union fn_obj o)
{
	return free_handle(o.v);
}

static int map_make(union fn_obj *o)
{
	struct drm_gaudi_nic_memory a = { .op = GAUDI_NIC_MEM_MAP };

	a.in.map.handle = mem_handle;
	if (mem(accel_fd, &a))
		return -1;
	o->v = a.out.device_virt_addr;
	return 0;
}

static int unmap_va(uint64_t va)
{
	struct drm_gaudi_nic_memory a = { .op = GAUDI_NIC_MEM_UNMAP };

	a.in.unmap.device_virt_addr = va;
	return mem(accel_fd, &a);
}

static int map_undo(union fn_obj o)
{
	return unmap_va(o.v);
}

static int export_make(union fn_obj *o)
{
	struct drm_gaudi_nic_memory a = {
		.op = GAUDI_NIC_MEM_EXPORT_DMABUF_FD
	};

	a.in.export_dmabuf_fd.device_virt_addr = mem_va;
	a.in.export_dmabuf_fd.size = MEM_SIZE;
	a.in.export_dmabuf_fd.fd_flags = O_RDWR | O_CLOEXEC;
	if (mem(accel_fd, &a))
		return -1;
	o->v = a.out.export_dmabuf_fd.fd;
	return 0;
}

static const struct fn_step accel_steps[] = {
	{ .name = "open of the accel node", .make = open_make, .undo = fd_undo },
	{ .name = "GAUDI_NIC_MEM_ALLOC (64 KiB)", .make = alloc_make, .undo = alloc_undo },
	{ .name = "GAUDI_NIC_MEM_MAP", .make = map_make, .undo = map_undo },
	{ .name = "GAUDI_NIC_MEM_EXPORT_DMABUF_FD", .make = export_make, .undo = fd_undo },
};

static int run_accel(const char *bus)
{
	union fn_obj o;
	int i, bad = 0;

	if (accel_find(bus)) {
		fprintf(stderr, "gn-fail-nth: no accel node of %s\n", bus);
		return 2;
	}
	printf("1..4\n");
	/* each step on what the ones before made, outside the armed call */
	for (i = 0; i < 4; i++) {
		bad |= fn_run(i + 1, &accel_steps[i]) != 0;
		if (i < 3 && accel_steps[i].make(&o)) {
			printf("# cannot make what the next step needs: %s\n",
			       strerror(errno));
			return 1;
		}
		if (i == 0)
			accel_fd = o.v;
		else if (i == 1)
			mem_handle = o.v;
		else if (i == 2)
			mem_va = o.v;
	}
	if (unmap_va(mem_va) || free_handle(mem_handle) || close(accel_fd))
		bad = 1;
	return bad;
}

/* ------------------------------------------------------------ netdev */

static int sk = -1;
static struct ifreq ifr0;		/* the port's name, flags, MTU */
static struct ethtool_ringparam ring0;	/* its rings, as found */

static int set_flags(short flags)
{
	struct ifreq r = ifr0;

	r.ifr_flags = flags;
	return ioctl(sk, SIOCSIFFLAGS, &r);
}

static int up_make(union fn_obj *o)
{
	o->v = 0;
	return set_flags(ifr0.ifr_flags | IFF_UP);
}

static int up_undo(union fn_obj o)
{
	(void)o;
	return set_flags(ifr0.ifr_flags & ~IFF_UP);
}

static int set_mtu(int mtu)
{
	struct ifreq r = ifr0;

	r.ifr_mtu = mtu;
	return ioctl(sk, SIOCSIFMTU, &r);
}

static int mtu_make(union fn_obj *o)
{
	o->v = 0;
	return set_mtu(ifr0.ifr_mtu == 4000 ? 2000 : 4000);
}

static int mtu_undo(union fn_obj o)
{
	(void)o;
	return set_mtu(ifr0.ifr_mtu);
}

static int set_rings(unsigned int rx, unsigned int tx)
{
	struct ethtool_ringparam rp = ring0;
	struct ifreq r = ifr0;

	rp.cmd = ETHTOOL_SRINGPARAM;
	rp.rx_pending = rx;
	rp.tx_pending = tx;
	r.ifr_data = (void *)&rp;
	return ioctl(sk, SIOCETHTOOL, &r);
}

static int rings_make(union fn_obj *o)
{
	o->v = 0;
	return set_rings(ring0.rx_pending, ring0.tx_pending * 2);
}

static int rings_undo(union fn_obj o)
{
	(void)o;
	return set_rings(ring0.rx_pending, ring0.tx_pending);
}

/*
 * Opening the port allocates its rings and each RX buffer (two sites a
 * buffer, 64 buffers: the script sets the smallest rings and one
 * channel): every one of the 32 sites before the buffers and of the 16
 * after them (the NETDEV_UP notifiers: gaudi_ib's among them) is failed,
 * every stride-th buffer between.  A ring change of the running port
 * allocates the new rings whole before it lets the old ones go: the same.
 * The MTU change is made with the port down: it then only records it
 * (with the port up it is a ring change) and notifies gaudi_ib.
 */
static const struct fn_step net_steps[] = {
	{ .name = "SIOCSIFFLAGS IFF_UP (open)", .make = up_make,
	  .undo = up_undo, .budget = 64, .head = 32, .tail = 16 },
	{ .name = "SIOCSIFMTU, port down", .make = mtu_make,
	  .undo = mtu_undo },
	{ .name = "ETHTOOL_SRINGPARAM (TX ring x2), port up",
	  .make = rings_make, .undo = rings_undo, .budget = 64, .head = 32,
	  .tail = 16 },
};

static int run_net(const char *ifname)
{
	struct ifreq r;
	union fn_obj o = { 0 };
	int i, bad = 0;

	sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&ifr0, 0, sizeof(ifr0));
	snprintf(ifr0.ifr_name, sizeof(ifr0.ifr_name), "%s", ifname);
	r = ifr0;
	ring0.cmd = ETHTOOL_GRINGPARAM;
	r.ifr_data = (void *)&ring0;
	if (sk < 0 || ioctl(sk, SIOCGIFFLAGS, &ifr0) ||
	    ioctl(sk, SIOCETHTOOL, &r)) {
		fprintf(stderr, "gn-fail-nth: %s: %s\n", ifname,
			strerror(errno));
		return 2;
	}
	r = ifr0;
	if (ioctl(sk, SIOCGIFMTU, &r)) {
		fprintf(stderr, "gn-fail-nth: %s: %s\n", ifname,
			strerror(errno));
		return 2;
	}
	ifr0.ifr_mtu = r.ifr_mtu;
	if (ifr0.ifr_flags & IFF_UP) {
		fprintf(stderr, "gn-fail-nth: %s is up: the open step needs it down\n",
			ifname);
		return 2;
	}
	printf("1..3\n");
	for (i = 0; i < 2; i++)
		bad |= fn_run(i + 1, &net_steps[i]) != 0;
	/* the rings of a running port: new rings, live */
	if (up_make(&o)) {
		printf("# cannot bring %s up: %s\n", ifname, strerror(errno));
		return 1;
	}
	bad |= fn_run(3, &net_steps[2]) != 0;
	if (up_undo(o))
		bad = 1;
	return bad;
}

/* ------------------------------------------------ device, link_device */

static int new_fd = -1, del_fd = -1, link_fd = -1, unlink_fd = -1;
static char new_arg[64], del_arg[16], link_arg[64], unlink_arg[32];
static unsigned int dev_id;
static int ib_loaded;

static int sys_write(int fd, const char *s)
{
	ssize_t len = strlen(s);

	return pwrite(fd, s, len, 0) == len ? 0 : -1;
}

static int device_make(union fn_obj *o)
{
	o->v = dev_id;
	return sys_write(new_fd, new_arg);
}

static int device_undo(union fn_obj o)
{
	(void)o;
	return sys_write(del_fd, del_arg);
}

static int exists(const char *fmt, unsigned int id)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), fmt, id);
	return !stat(path, &st);
}

/*
 * The whole device: the accel driver bound (its probe made the accel
 * node, the MACs, devlink and the auxiliary devices), port 0's netdev
 * (the Ethernet driver's probe) and, with gaudi_ib loaded, the ib_device
 * (gaudi_ib's probe).
 */
static int device_whole(union fn_obj o)
{
	unsigned int id = o.v;

	return exists("/sys/bus/platform/devices/gaudi_nic.%u/driver", id) &&
	       exists("/sys/class/net/gn%up0", id) &&
	       (!ib_loaded || exists("/sys/class/infiniband/gaudi_%u", id));
}

static int link_make(union fn_obj *o)
{
	o->v = 0;
	return sys_write(link_fd, link_arg);
}

static int link_undo(union fn_obj o)
{
	(void)o;
	return sys_write(unlink_fd, unlink_arg);
}

/*
 * Device creation has thousands of sites (an ib_device has sysfs files by
 * the hundred), and each visit creates and deletes a device twice, some
 * seconds on the debug kernel: every one of the first 10 (gaudi_nic_sim's
 * own: the device, its HBM frame table, its MACs, the id, debugfs) and of
 * the last 4 (gaudi_ib's netdev notifier) is failed, a fixed stride
 * between, 24 visits in all.
 */
static const struct fn_step device_step = {
	.name = "new_device (platform device, accel, netdev and ib_device probes)",
	.make = device_make, .undo = device_undo, .whole = device_whole,
	.budget = 24, .head = 10, .tail = 4,
};

static const struct fn_step link_step = {
	.name = "link_device (cable two ports)",
	.make = link_make, .undo = link_undo,
};

static int sys_open(const char *name)
{
	int fd = open(name, O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		fprintf(stderr, "gn-fail-nth: %s: %s\n", name,
			strerror(errno));
	return fd;
}

static int run_device(int argc, char **argv)
{
	dev_id = atoi(argv[0]);
	snprintf(new_arg, sizeof(new_arg), "%u %s %s", dev_id,
		 argc > 1 ? argv[1] : "1", argc > 2 ? argv[2] : "16");
	snprintf(del_arg, sizeof(del_arg), "%u", dev_id);
	ib_loaded = !access("/sys/module/gaudi_ib", F_OK);
	new_fd = sys_open(SIMDRV "new_device");
	del_fd = sys_open(SIMDRV "del_device");
	if (new_fd < 0 || del_fd < 0)
		return 2;
	if (!ib_loaded)
		printf("# gaudi_ib is not loaded: no ib_device in the device's creation\n");
	printf("1..1\n");
	return fn_run(1, &device_step) != 0;
}

static int run_link(const char *a, const char *b)
{
	int ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	unsigned int ia = if_nametoindex(a), ib = if_nametoindex(b);

	link_fd = sys_open(SIMDRV "link_device");
	unlink_fd = sys_open(SIMDRV "unlink_device");
	if (ns < 0 || !ia || !ib || link_fd < 0 || unlink_fd < 0) {
		fprintf(stderr, "gn-fail-nth: %s, %s: %s\n", a, b,
			strerror(errno));
		return 2;
	}
	snprintf(link_arg, sizeof(link_arg), "%d:%u %d:%u", ns, ia, ns, ib);
	snprintf(unlink_arg, sizeof(unlink_arg), "%d:%u", ns, ia);
	printf("1..1\n");
	return fn_run(1, &link_step) != 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!((!strcmp(mode, "accel") && argc == 3) ||
	      (!strcmp(mode, "net") && argc == 3) ||
	      (!strcmp(mode, "device") && argc >= 3 && argc <= 5) ||
	      (!strcmp(mode, "link") && argc == 4))) {
		fprintf(stderr, "usage: %s accel BUS_ID | net IFNAME | device ID [PORTS [HBM_MB]] | link IF_A IF_B\n",
			argv[0]);
		return 2;
	}
	printf("TAP version 13\n");
	if (fn_open()) {
		printf("1..1\nnot ok 1 - /proc/thread-self/fail-nth: %s (a kernel with CONFIG_FAULT_INJECTION)\n",
		       strerror(errno));
		return 1;
	}
	if (!strcmp(mode, "accel"))
		return run_accel(argv[2]);
	if (!strcmp(mode, "net"))
		return run_net(argv[2]);
	if (!strcmp(mode, "device"))
		return run_device(argc - 2, argv + 2);
	return run_link(argv[2], argv[3]);
}
