// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_ib: auxiliary driver for gaudi_nic.rdma.N.  Registers ib_device
 * gaudi_N with one RoCE v2 port per NIC port, follows the port netdevs
 * (carrier, MTU, MAC) and forwards engine events to the RDMA core.
 */
#include <linux/etherdevice.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/ib_cache.h>
#include <linux/gaudi_nic/core.h>

#include "gaudi_ib.h"

/*
 * An engine event, in softirq context with no engine lock held (the
 * engine's interrupt): handlers may poll, re-arm their CQ or post (N4 of
 * the November review: they used to run under the engine's lock with
 * IRQs off).  No lock of ours is held across a handler either: the
 * object cannot go away under it, because destroy erases it from its
 * table and then destroys its engine context, and the engine's DESTROY_*
 * returns only once no delivery of its events is under way.
 */
static void gib_event(void *priv, const struct gn_roce_eqe *eqe)
{
	struct gib_dev *dev = priv;
	u32 num = le32_to_cpu(eqe->num);
	struct ib_event ev = { .device = &dev->ibdev };
	struct gib_srq *srq;
	struct gib_cq *cq;
	struct gib_qp *qp;

	switch (eqe->type) {
	case GN_ROCE_EV_COMP:
	case GN_ROCE_EV_CQ_ERR:
		cq = xa_load(&dev->cqs, num);
		if (cq && eqe->type == GN_ROCE_EV_COMP) {
			if (cq->ibcq.comp_handler)
				cq->ibcq.comp_handler(&cq->ibcq,
						      cq->ibcq.cq_context);
		} else if (cq && cq->ibcq.event_handler) {
			ev.event = IB_EVENT_CQ_ERR;
			ev.element.cq = &cq->ibcq;
			cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
		}
		break;
	case GN_ROCE_EV_QP_FATAL:
	case GN_ROCE_EV_QP_REQ_ERR:
	case GN_ROCE_EV_QP_ACC_ERR:
	case GN_ROCE_EV_QP_LAST_WQE:
		if (eqe->type == GN_ROCE_EV_QP_FATAL)
			ev.event = IB_EVENT_QP_FATAL;
		else if (eqe->type == GN_ROCE_EV_QP_REQ_ERR)
			ev.event = IB_EVENT_QP_REQ_ERR;
		else if (eqe->type == GN_ROCE_EV_QP_ACC_ERR)
			ev.event = IB_EVENT_QP_ACCESS_ERR;
		else
			ev.event = IB_EVENT_QP_LAST_WQE_REACHED;
		qp = xa_load(&dev->qps, num);
		if (qp && qp->ibqp.event_handler) {
			ev.element.qp = &qp->ibqp;
			qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
		}
		break;
	case GN_ROCE_EV_SRQ_LIMIT:
		srq = xa_load(&dev->srqs, num);
		if (srq && srq->ibsrq.event_handler) {
			ev.event = IB_EVENT_SRQ_LIMIT_REACHED;
			ev.element.srq = &srq->ibsrq;
			srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
		}
		break;
	default:
		break;
	}
}

static void gib_port_event(struct gib_dev *dev, u32 port,
			   enum ib_event_type type)
{
	struct ib_event ev = {
		.device = &dev->ibdev,
		.element.port_num = port + 1,
		.event = type,
	};

	ib_dispatch_event(&ev);
}

/* Tell the engine the port's MAC and MTU. */
static void gib_port_config(struct gib_dev *dev, u32 port,
			    struct net_device *ndev)
{
	struct gn_roce_port_ctx pc = {};

	if (ndev) {
		ether_addr_copy(pc.mac, ndev->dev_addr);
		pc.mtu = cpu_to_le32(READ_ONCE(ndev->mtu));
	}
	if (gaudi_nic_roce_cmd(dev->gadev, GN_ROCE_CMD_SET_PORT, port, &pc,
			       sizeof(pc), NULL, 0))
		ibdev_warn(&dev->ibdev, "port %u: SET_PORT failed\n", port + 1);
}

/*
 * Re-read which netdev backs each port (the Ethernet driver may bind
 * before or after us) and push MAC/MTU to the engine.  Under RTNL.
 */
static void gib_sync_ports(struct gib_dev *dev)
{
	struct gaudi_nic_dev *gdev = dev->gadev->gdev;
	u32 port;

	ASSERT_RTNL();
	for (port = 0; port < dev->num_ports; port++) {
		struct net_device *ndev = gaudi_nic_port_netdev(gdev, port);

		if (ndev != dev->netdevs[port]) {
			if (ib_device_set_netdev(&dev->ibdev, ndev, port + 1)) {
				if (ndev)
					dev_put(ndev);
				continue;
			}
			if (dev->netdevs[port])
				dev_put(dev->netdevs[port]);
			dev->netdevs[port] = ndev;
		} else if (ndev) {
			dev_put(ndev);
		}
		gib_port_config(dev, port, dev->netdevs[port]);
	}
}

/* @port is backed by @ndev now (NULL: by none).  Under RTNL. */
static void gib_update_port(struct gib_dev *dev, u32 port,
			    struct net_device *ndev)
{
	ASSERT_RTNL();
	if (ndev != dev->netdevs[port]) {
		if (ib_device_set_netdev(&dev->ibdev, ndev, port + 1))
			return;
		if (ndev)
			dev_hold(ndev);
		if (dev->netdevs[port])
			dev_put(dev->netdevs[port]);
		dev->netdevs[port] = ndev;
	}
	gib_port_config(dev, port, ndev);
}

/*
 * Netdev events of the whole system arrive here; only those of our own
 * ports' netdevs matter, and gaudi_nic_port_of() tells which port a
 * netdev is without searching any namespace.  A netdev that moves to
 * another namespace is unregistered and registered again.
 */
static int gib_netdev_event(struct notifier_block *nb, unsigned long event,
			    void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct gib_dev *dev = container_of(nb, struct gib_dev, nb);
	int ours = gaudi_nic_port_of(dev->gadev->gdev, ndev);
	u32 port;

	switch (event) {
	case NETDEV_REGISTER:
	case NETDEV_CHANGEMTU:
	case NETDEV_CHANGEADDR:
		if (ours >= 0)
			gib_update_port(dev, ours, ndev);
		break;
	case NETDEV_UNREGISTER:
		if (ours >= 0 && dev->netdevs[ours] == ndev)
			gib_update_port(dev, ours, NULL);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		for (port = 0; port < dev->num_ports; port++) {
			if (dev->netdevs[port] != ndev)
				continue;
			gib_port_event(dev, port,
				       netif_running(ndev) &&
				       netif_carrier_ok(ndev) ?
				       IB_EVENT_PORT_ACTIVE :
				       IB_EVENT_PORT_ERR);
		}
		break;
	default:
		break;
	}
	return NOTIFY_DONE;
}

/* Drop the references on the ports' netdevs taken at probe. */
static void gib_put_netdevs(struct gib_dev *dev)
{
	u32 port;

	rtnl_lock();
	for (port = 0; port < dev->num_ports; port++) {
		if (dev->netdevs[port])
			dev_put(dev->netdevs[port]);
		dev->netdevs[port] = NULL;
	}
	rtnl_unlock();
}

static int gib_probe(struct auxiliary_device *adev,
		     const struct auxiliary_device_id *id)
{
	struct gaudi_nic_adev *gadev = to_gaudi_nic_adev(adev);
	struct gaudi_nic_dev *gdev = gadev->gdev;
	char name[IB_DEVICE_NAME_MAX];
	struct gib_dev *dev;
	int ret;
	u32 h;

	if (!gdev->num_ports || gdev->num_ports > GAUDI_NIC_MAX_PORTS)
		return -EINVAL;
	dev = ib_alloc_device(gib_dev, ibdev);
	if (!dev)
		return -ENOMEM;
	dev->gadev = gadev;
	dev->dma_dev = &gdev->pdev->dev;
	dev->num_ports = gdev->num_ports;
	ida_init(&dev->pd_ida);
	ida_init(&dev->cq_ida);
	ida_init(&dev->qp_ida);
	ida_init(&dev->mr_ida);
	ida_init(&dev->mw_ida);
	ida_init(&dev->ah_ida);
	xa_init_flags(&dev->cqs, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->qps, XA_FLAGS_LOCK_IRQ);
	ida_init(&dev->srq_ida);
	xa_init_flags(&dev->srqs, XA_FLAGS_LOCK_IRQ);

	dev->ibdev.node_type = RDMA_NODE_IB_CA;
	dev->ibdev.phys_port_cnt = dev->num_ports;
	dev->ibdev.num_comp_vectors = 1;
	dev->ibdev.dev.parent = &adev->dev;
	/* kernel PDs' lkey for DMA addresses of dev->dma_dev (our dma_device) */
	dev->ibdev.local_dma_lkey = GN_ROCE_LOCAL_DMA_LKEY;
	strscpy(dev->ibdev.node_desc, "gaudi_nic RoCE v2 engine",
		sizeof(dev->ibdev.node_desc));
	/*
	 * Node GUID: the EUI-64 of port 0's MAC address, 02:<hash>:00 (the
	 * serial's hash), as RoCE NICs derive theirs; unique per board, so
	 * two hosts' devices of the same id differ.
	 */
	h = gaudi_nic_serial_hash(gdev);
	dev->ibdev.node_guid = cpu_to_be64((u64)(h >> 16) << 40 |
					   0xfffeULL << 24 | (u64)(h & 0xffff) << 8);
	ib_set_device_ops(&dev->ibdev, &gib_dev_ops);
	dev->ibdev.driver_def = gib_uapi_defs;
	/* write commands the core only offers on request: the doorbells */
	dev->ibdev.uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				      BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
				      BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);

	ret = gaudi_nic_roce_enable(dev->gadev, gib_event, dev);
	if (ret)
		goto err_free;

	rtnl_lock();
	gib_sync_ports(dev);
	rtnl_unlock();

	snprintf(name, sizeof(name), "gaudi_%u", gdev->id);
	ret = ib_register_device(&dev->ibdev, name, dev->dma_dev);
	if (ret)
		goto err_disable;

	dev->nb.notifier_call = gib_netdev_event;
	ret = register_netdevice_notifier(&dev->nb);
	if (ret)
		goto err_unregister;
	/* Catch netdevs that appeared between the first sync and now. */
	rtnl_lock();
	gib_sync_ports(dev);
	rtnl_unlock();

	auxiliary_set_drvdata(adev, dev);
	ibdev_info(&dev->ibdev, "%u RoCE v2 ports\n", dev->num_ports);
	return 0;

err_unregister:
	ib_unregister_device(&dev->ibdev);
err_disable:
	gaudi_nic_roce_disable(dev->gadev);
	gib_put_netdevs(dev);
err_free:
	ib_dealloc_device(&dev->ibdev);
	return ret;
}

static void gib_remove(struct auxiliary_device *adev)
{
	struct gib_dev *dev = auxiliary_get_drvdata(adev);

	unregister_netdevice_notifier(&dev->nb);
	/* Destroys every object; user processes see -EIO afterwards. */
	ib_unregister_device(&dev->ibdev);
	gaudi_nic_roce_disable(dev->gadev);
	gib_put_netdevs(dev);
	/* ib_unregister_device() destroyed every object, AHs included */
	WARN_ON(!xa_empty(&dev->cqs) || !xa_empty(&dev->qps) ||
		!ida_is_empty(&dev->ah_ida));
	WARN_ON(!xa_empty(&dev->srqs));
	ida_destroy(&dev->pd_ida);
	ida_destroy(&dev->cq_ida);
	ida_destroy(&dev->qp_ida);
	ida_destroy(&dev->mr_ida);
	ida_destroy(&dev->mw_ida);
	ida_destroy(&dev->ah_ida);
	ida_destroy(&dev->srq_ida);
	ib_dealloc_device(&dev->ibdev);
}

static const struct auxiliary_device_id gib_id_table[] = {
	{ .name = "gaudi_nic.rdma" },
	{}
};
MODULE_DEVICE_TABLE(auxiliary, gib_id_table);

static struct auxiliary_driver gib_driver = {
	.name = "ib",
	.probe = gib_probe,
	.remove = gib_remove,
	.id_table = gib_id_table,
};
module_auxiliary_driver(gib_driver);

MODULE_DESCRIPTION("RDMA driver for the gaudi_nic RoCE v2 engine");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(GAUDI_NIC);
