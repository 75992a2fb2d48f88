// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_nic_test_canary - a test-only module that does, at load, one of
 * the things the debug kernel's detectors exist to report, so that the
 * debug-kernel lane (tests/vm/canary.sh) can show that its watch
 * (tests/vm/kreports.sh) sees each kind and fails a test for it.  On the
 * stock kernel the same loads report nothing, which is why the lane runs
 * on a debug kernel at all.
 *
 *   insmod gaudi_nic_test_canary.ko what=assert  lockdep_assert_held() on
 *                                                 a mutex nobody holds
 *   insmod ... what=leak   a kmalloc()ed object whose only pointer is lost
 *   insmod ... what=ubsan  a shift past the width of its type
 *   insmod ... what=kasan  a read one byte past a kmalloc()ed object
 *                          (generic KASAN reports only its first bug per
 *                          boot: the lane runs this one last)
 *
 * The module stays loaded (rmmod it); anything else for "what" is -EINVAL.
 */
#include <linux/lockdep.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>

static char *what = "";
module_param(what, charp, 0444);
MODULE_PARM_DESC(what, "assert, leak, ubsan or kasan: the report to cause");

/* a parameter, so that no compiler or checker sees the bad shift coming */
static unsigned int shift = 40;
module_param(shift, uint, 0444);
MODULE_PARM_DESC(shift, "what=ubsan shifts 1U by this (40: past its width)");

static DEFINE_MUTEX(canary_lock);
static void *canary_obj;

/*
 * Not __init: the init section is freed once the module is loaded, and a
 * report read later (kmemleak's backtrace) could not name the function.
 */
static noinline int canary_fire(void)
{
	char *p;

	if (!strcmp(what, "assert")) {
		lockdep_assert_held(&canary_lock);
	} else if (!strcmp(what, "leak")) {
		WRITE_ONCE(canary_obj, kmalloc(128, GFP_KERNEL));
		/* the only reference goes: kmemleak finds it unreferenced */
		WRITE_ONCE(canary_obj, NULL);
	} else if (!strcmp(what, "ubsan")) {
		pr_info("gaudi_nic_test_canary: 1 << %u = %u\n", shift,
			1U << shift);
	} else if (!strcmp(what, "kasan")) {
		p = kmalloc(8, GFP_KERNEL);
		if (!p)
			return -ENOMEM;
		OPTIMIZER_HIDE_VAR(p);
		pr_info("gaudi_nic_test_canary: byte 8 of 8 is %d\n",
			READ_ONCE(p[8]));
		kfree(p);
	} else {
		return -EINVAL;
	}
	return 0;
}

static int __init canary_init(void)
{
	return canary_fire();
}

static void __exit canary_exit(void)
{
}

module_init(canary_init);
module_exit(canary_exit);
MODULE_DESCRIPTION("gaudi_nic test: makes the debug kernel's detectors report");
MODULE_LICENSE("GPL");
