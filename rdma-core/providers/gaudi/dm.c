// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Device memory (ibv_alloc_dm()): HBM of the device, mapped into the
 * process through the uverbs file at the offset GAUDI_IB_METHOD_DM_QUERY
 * gives, copied to and from in 32-bit words, and registered as zero-based
 * MRs (ibv_reg_dm_mr()).
 */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <infiniband/cmd_ioctl.h>
#include <rdma/ib_user_ioctl_cmds.h>

#include "gaudi.h"

struct gaudi_dm {
	struct verbs_dm vdm;
	void *va;		/* the mapping, length rounded up to pages */
	size_t map_len;
	uint64_t length;	/* bytes asked for */
};

static struct gaudi_dm *to_gdm(struct ibv_dm *ibdm)
{
	return container_of(ibdm, struct gaudi_dm, vdm.dm);
}

/*
 * Accesses are 32-bit words at 4-byte aligned offsets, as a BAR of device
 * memory takes them (and as ibv_memcpy_to_dm(3) allows a device to ask).
 */
static int gaudi_dm_range(struct gaudi_dm *dm, uint64_t off, size_t len)
{
	if (off > dm->length || len > dm->length - off)
		return EFAULT;
	if ((off | len) & 3)
		return EINVAL;
	return 0;
}

static int gaudi_memcpy_to_dm(struct ibv_dm *ibdm, uint64_t dm_offset,
			      const void *host_addr, size_t length)
{
	struct gaudi_dm *dm = to_gdm(ibdm);
	volatile uint32_t *dst;
	const uint8_t *src = host_addr;
	size_t i;
	int ret;

	ret = gaudi_dm_range(dm, dm_offset, length);
	if (ret)
		return ret;
	dst = (volatile uint32_t *)((uint8_t *)dm->va + dm_offset);
	for (i = 0; i < length / 4; i++) {
		uint32_t w;

		memcpy(&w, src + 4 * i, sizeof(w));
		dst[i] = w;
	}
	return 0;
}

static int gaudi_memcpy_from_dm(void *host_addr, struct ibv_dm *ibdm,
				uint64_t dm_offset, size_t length)
{
	struct gaudi_dm *dm = to_gdm(ibdm);
	const volatile uint32_t *src;
	uint8_t *dst = host_addr;
	size_t i;
	int ret;

	ret = gaudi_dm_range(dm, dm_offset, length);
	if (ret)
		return ret;
	src = (const volatile uint32_t *)((uint8_t *)dm->va + dm_offset);
	for (i = 0; i < length / 4; i++) {
		uint32_t w = src[i];

		memcpy(dst + 4 * i, &w, sizeof(w));
	}
	return 0;
}

/* Map DM @handle of @context into @dm (0 or an errno). */
static int gaudi_dm_map(struct ibv_context *context, uint32_t handle,
			struct gaudi_dm *dm)
{
	DECLARE_COMMAND_BUFFER(cmdb, UVERBS_OBJECT_DM, GAUDI_IB_METHOD_DM_QUERY,
			       3);
	long page = sysconf(_SC_PAGESIZE);
	uint64_t off, len;
	int ret;

	fill_attr_in_obj(cmdb, GAUDI_IB_ATTR_QUERY_DM_HANDLE, handle);
	fill_attr_out_ptr(cmdb, GAUDI_IB_ATTR_QUERY_DM_MMAP_OFFSET, &off);
	fill_attr_out_ptr(cmdb, GAUDI_IB_ATTR_QUERY_DM_LENGTH, &len);
	ret = execute_ioctl(context, cmdb);
	if (ret)
		return ret;
	if (!len || len > SIZE_MAX - page)
		return EINVAL;
	dm->map_len = (len + page - 1) & ~(uint64_t)(page - 1);
	dm->va = mmap(NULL, dm->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		      context->cmd_fd, off);
	if (dm->va == MAP_FAILED)
		return errno;
	dm->length = len;
	dm->vdm.dm.context = context;
	dm->vdm.dm.memcpy_to_dm = gaudi_memcpy_to_dm;
	dm->vdm.dm.memcpy_from_dm = gaudi_memcpy_from_dm;
	dm->vdm.dm.comp_mask = IBV_DM_MASK_HANDLE;
	dm->vdm.dm.handle = handle;
	dm->vdm.handle = handle;
	return 0;
}

struct ibv_dm *gaudi_alloc_dm(struct ibv_context *context,
			      struct ibv_alloc_dm_attr *attr)
{
	struct gaudi_dm *dm;
	int ret;

	if (attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_alloc_dm(context, attr, &dm->vdm, NULL);
	if (ret)
		goto err_free;
	ret = gaudi_dm_map(context, dm->vdm.handle, dm);
	if (ret) {
		ibv_cmd_free_dm(&dm->vdm);
		goto err_free;
	}
	gaudi_obj_get(context);
	return &dm->vdm.dm;

err_free:
	free(dm);
	errno = ret;
	return NULL;
}

int gaudi_free_dm(struct ibv_dm *ibdm)
{
	struct ibv_context *context = ibdm->context;
	struct gaudi_dm *dm = to_gdm(ibdm);
	int ret = gaudi_ctx_closed(context) ? 0 : ibv_cmd_free_dm(&dm->vdm);

	if (ret)
		return ret;
	munmap(dm->va, dm->map_len);
	free(dm);
	gaudi_obj_put(context);
	return 0;
}

/* ibv_import_dm(): the DM of another context on the same uverbs file. */
struct ibv_dm *gaudi_import_dm(struct ibv_context *context,
			       uint32_t dm_handle)
{
	struct gaudi_dm *dm = calloc(1, sizeof(*dm));
	int ret;

	if (!dm) {
		errno = ENOMEM;
		return NULL;
	}
	ret = gaudi_dm_map(context, dm_handle, dm);
	if (ret) {
		free(dm);
		errno = ret;
		return NULL;
	}
	gaudi_obj_get(context);
	return &dm->vdm.dm;
}

void gaudi_unimport_dm(struct ibv_dm *ibdm)
{
	struct ibv_context *context = ibdm->context;
	struct gaudi_dm *dm = to_gdm(ibdm);

	munmap(dm->va, dm->map_len);
	free(dm);
	gaudi_obj_put(context);
}

struct ibv_mr *gaudi_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
			       uint64_t dm_offset, size_t length,
			       unsigned int access)
{
	struct verbs_mr *vmr = calloc(1, sizeof(*vmr));
	int ret;

	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_reg_dm_mr(pd, &to_gdm(ibdm)->vdm, dm_offset, length,
				access, vmr, NULL);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	gaudi_obj_get(pd->context);
	return &vmr->ibv_mr;
}
