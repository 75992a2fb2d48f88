// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only delay injector: holds one task for a while when it enters a
 * kernel function, so that a test can open a race window on purpose
 * instead of hoping for one.
 *
 *   echo "FUNCTION TID MS" > /sys/kernel/debug/gaudi_nic_test_delay/arm
 *
 * The next time thread TID enters FUNCTION (a kprobe on its first
 * instruction), it busy-waits MS milliseconds (at most 2000), once.
 * Writing "off" disarms.  Only one probe is armed at a time.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#define GN_DELAY_MAX_MS	2000

static DEFINE_MUTEX(gn_delay_lock);	/* arming and disarming */
static struct kprobe gn_delay_kp;
static bool gn_delay_armed;		/* under gn_delay_lock */
static char gn_delay_sym[KSYM_NAME_LEN];
static pid_t gn_delay_tid;
static unsigned int gn_delay_ms;
static atomic_t gn_delay_fired;
static struct dentry *gn_delay_dir;

static int gn_delay_pre(struct kprobe *kp, struct pt_regs *regs)
{
	if (current->pid == READ_ONCE(gn_delay_tid) &&
	    !atomic_xchg(&gn_delay_fired, 1))
		mdelay(READ_ONCE(gn_delay_ms));
	return 0;
}

NOKPROBE_SYMBOL(gn_delay_pre);

static void gn_delay_disarm(void)
{
	lockdep_assert_held(&gn_delay_lock);
	if (gn_delay_armed)
		unregister_kprobe(&gn_delay_kp);
	gn_delay_armed = false;
}

static ssize_t gn_delay_write(struct file *f, const char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	char buf[KSYM_NAME_LEN + 32], sym[KSYM_NAME_LEN];
	unsigned int ms;
	int tid, ret;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	mutex_lock(&gn_delay_lock);
	gn_delay_disarm();
	if (sysfs_streq(buf, "off")) {
		ret = len;
		goto out;
	}
	/* the width matches KSYM_NAME_LEN - 1 */
	if (sscanf(buf, "%511s %d %u", sym, &tid, &ms) != 3 || tid <= 0 ||
	    ms > GN_DELAY_MAX_MS) {
		ret = -EINVAL;
		goto out;
	}
	strscpy(gn_delay_sym, sym);
	WRITE_ONCE(gn_delay_tid, tid);
	WRITE_ONCE(gn_delay_ms, ms);
	atomic_set(&gn_delay_fired, 0);
	memset(&gn_delay_kp, 0, sizeof(gn_delay_kp));
	gn_delay_kp.symbol_name = gn_delay_sym;
	gn_delay_kp.pre_handler = gn_delay_pre;
	ret = register_kprobe(&gn_delay_kp);
	if (ret) {
		pr_warn("gaudi_nic_test_delay: cannot probe %s: %d\n", sym,
			ret);
		goto out;
	}
	gn_delay_armed = true;
	ret = len;
out:
	mutex_unlock(&gn_delay_lock);
	return ret;
}

static ssize_t gn_delay_read(struct file *f, char __user *ubuf, size_t len,
			     loff_t *ppos)
{
	char buf[16];
	int n = scnprintf(buf, sizeof(buf), "%d\n",
			  atomic_read(&gn_delay_fired));

	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations gn_delay_fops = {
	.owner = THIS_MODULE,
	.write = gn_delay_write,
	.read = gn_delay_read,
};

static int __init gn_delay_init(void)
{
	BUILD_BUG_ON(KSYM_NAME_LEN != 512);
	gn_delay_dir = debugfs_create_dir("gaudi_nic_test_delay", NULL);
	debugfs_create_file("arm", 0600, gn_delay_dir, NULL, &gn_delay_fops);
	return 0;
}

static void __exit gn_delay_exit(void)
{
	debugfs_remove_recursive(gn_delay_dir);
	mutex_lock(&gn_delay_lock);
	gn_delay_disarm();
	mutex_unlock(&gn_delay_lock);
}

module_init(gn_delay_init);
module_exit(gn_delay_exit);
MODULE_DESCRIPTION("gaudi_nic tests: delay a thread at a kernel function");
MODULE_LICENSE("GPL");
