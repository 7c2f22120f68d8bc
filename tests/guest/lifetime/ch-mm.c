// SPDX-License-Identifier: GPL-2.0
/*
 * lifetime - memory management: a memory cgroup's pages (memcg), a
 * transparent huge page (thp) and a page of the hugetlb pool (hugetlb);
 * the distro kernels only.
 */
#include "lifetime.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>

/*
 * The process in the memory cgroup (a helper of the channel, forked
 * before any secret): it moves itself in, forks the reader there, and
 * puts the secret in COPIES anonymous pages and, from them, in COPIES
 * pipe pages (pipe_write() allocates them with __GFP_ACCOUNT), all
 * charged to the group.  At the release it unmaps its pages and closes
 * the pipe, the reader reads (which frees the pipe pages), both exit.
 */
static int memcg_worker(const struct channel *ch, struct result *r, const char *group)
{
	char path[300], text[512], member[300], *anon;
	int fds[2], i, sync, up = helper_fd;
	long long charged;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/cgroup.procs", group);
	if (write_file(path, "0"))
		return fail_errno(r, "joining the cgroup (cgroup.procs)");
	/* "0::/lifetime-memcg.N": in the group, on the unified hierarchy. */
	if (read_file("/proc/self/cgroup", text, sizeof(text)) < 0)
		return fail_errno(r, "/proc/self/cgroup");
	snprintf(member, sizeof(member), "%s\n", strrchr(group, '/'));
	if (!strstr(text, member))
		return fail(r, "not in %s after joining it", group);
	if (pipe(fds))
		return fail_errno(r, "pipe");
	pid = fork_helper(&sync, r);	/* in the group, before any secret */
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(up);	/* the channel waits for EOF on it if we die */
		close(fds[1]);
		pipe_reader(fds[0], ch, r);
	}
	close(fds[0]);
	anon = mmap(NULL, COPIES * PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (anon == MAP_FAILED) {
		fail_errno(r, "mmap");
		return stop_helper(pid);
	}
	for (i = 0; i < COPIES; i++) {
		secret_derive(seed, ch->name, anon + i * PAGE + OFFSET);
		if (write_full(fds[1], anon + i * PAGE, PAGE)) {
			fail_errno(r, "write to the pipe");
			return stop_helper(pid);
		}
	}
	if (wait_helper(sync, pid, r, "reader"))
		return -1;
	/*
	 * The group is charged.  Charges reach memory.current in per-cpu
	 * batches (MEMCG_CHARGE_BATCH pages), so this cannot say exactly
	 * for what, only that the group is not empty.
	 */
	snprintf(path, sizeof(path), "%s/memory.current", group);
	if (read_file(path, text, sizeof(text)) <= 0) {
		fail_errno(r, path);
		return stop_helper(pid);
	}
	charged = atoll(text);
	if (charged < 2 * COPIES * PAGE) {
		fail(r, "memory.current is %lld bytes, less than the %d pages put in the group",
		     charged, 2 * COPIES);
		return stop_helper(pid);
	}
	note(r, "%d anonymous and %d pipe pages in %s (memory.current %lld kB), read by pid %d, cgroup removed",
	     COPIES, COPIES, group, charged / 1024, (int)pid);
	helper_hold();
	munmap(anon, COPIES * PAGE);
	close(fds[1]);
	return wait_child(pid, r, "reader");
}

/*
 * The channel's own process stays outside the group, creates it, and
 * removes it at the release once it has reaped the worker: a cgroup with
 * a process in it cannot be removed.  cgroup2 is mounted on
 * LIFETIME_CGROUP (default /sys/fs/cgroup) if it is not there yet (the
 * guest's /init does not mount it), and unmounted again after.
 */
int ch_memcg(const struct channel *ch, struct result *r)
{
	const char *root = getenv("LIFETIME_CGROUP") ? getenv("LIFETIME_CGROUP") :
						       "/sys/fs/cgroup";
	char path[300], group[256], text[1024], *line;
	struct statfs sfs;
	int mounted = 0, sync, ret, rc, i, enabled;
	pid_t pid;

	/*
	 * One line per controller built in, "<name> <hierarchy> <cgroups>
	 * <enabled>": no "memory" line, no MEMCG; enabled 0, booted with
	 * cgroup_disable=memory.
	 */
	if (read_file("/proc/cgroups", text, sizeof(text)) < 0)
		return errno == ENOENT ? skip(r, "kernel has no CGROUPS, so no MEMCG") :
					 fail_errno(r, "/proc/cgroups");
	line = strstr(text, "\nmemory\t");
	if (!line)
		return skip(r, "kernel has no MEMCG (no memory controller in /proc/cgroups)");
	if (sscanf(line + 1, "memory %*d %*d %d", &enabled) != 1)
		return fail(r, "cannot read the memory line of /proc/cgroups");
	if (!enabled)
		return skip(r, "memory controller disabled (cgroup_disable=memory)");
	if (statfs(root, &sfs))
		return fail_errno(r, root);
	if (sfs.f_type == SYSFS_MAGIC) {	/* the empty mount point */
		if (mount("cgroup2", root, "cgroup2", 0, NULL))
			return fail_errno(r, "mount -t cgroup2");
		mounted = 1;
	} else if (sfs.f_type != CGROUP2_SUPER_MAGIC) {
		return fail(r, "%s is neither cgroup2 nor its mount point (set LIFETIME_CGROUP)",
			    root);
	}
	ret = -1;
	snprintf(path, sizeof(path), "%s/cgroup.controllers", root);
	if (read_file(path, text, sizeof(text)) < 0) {
		fail_errno(r, path);
		goto unmount;
	}
	if (!has_word(text, "memory")) {
		/* MEMCG is there (/proc/cgroups), but bound to a v1 hierarchy. */
		fail(r, "no memory controller in %s (a cgroup v1 hierarchy has it?)", path);
		goto unmount;
	}
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", root);
	if (write_file(path, "+memory")) {
		fail_errno(r, "enabling +memory in cgroup.subtree_control");
		goto unmount;
	}
	snprintf(group, sizeof(group), "%s/lifetime-memcg.%d", root, (int)getpid());
	if (mkdir(group, 0755)) {
		fail_errno(r, group);
		goto unmount;
	}
	snprintf(path, sizeof(path), "%s/memory.max", group);
	if (write_file(path, "64M")) {
		fail_errno(r, "memory.max");
		goto rmdir;
	}
	pid = fork_helper(&sync, r);
	if (pid < 0)
		goto rmdir;
	if (pid == 0)
		child_exit(memcg_worker(ch, r, group) ? 1 : 0);
	if (wait_helper(sync, pid, r, "the process in the cgroup"))
		goto rmdir;
	hold(r);
	ret = wait_child(pid, r, "the process in the cgroup");
rmdir:
	/* The group empties as its last process is reaped; allow a little. */
	for (i = 0; (rc = rmdir(group)) && errno == EBUSY && i < 100; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	if (rc && !ret)
		ret = fail(r, "rmdir %s: %s", group, strerror(errno));
unmount:
	if (mounted)
		umount(root);
	return ret;
}

/*
 * The secret in COPIES of the 512 subpages of one 2 MiB transparent huge
 * page, a PMD mapping of its own; at the release it is unmapped, which
 * frees the order-9 folio whole.  A kernel with THP must really give a
 * huge page (/proc/self/smaps AnonHugePages), or the channel fails: it
 * would measure small pages, which heap already does.
 */
#define HPAGE		(2UL << 20)

/* AnonHugePages (kB) of the mapping that contains addr, -1 if not found. */
static long anon_huge_kb(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[512];
	long kb = -1;
	int in = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		/* A mapping's first line is "lo-hi perms ...", then its fields. */
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
		else if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

#define THP_ENABLED	"/sys/kernel/mm/transparent_hugepage/enabled"

int ch_thp(const struct channel *ch, struct result *r)
{
	char mode[128];
	char *p, *a;
	int i, set = 0;
	long kb;

	if (access("/sys/kernel/mm/transparent_hugepage", F_OK))
		return errno == ENOENT ? skip(r, "kernel has no TRANSPARENT_HUGEPAGE") :
					 fail_errno(r, "/sys/kernel/mm/transparent_hugepage");
	if (read_file(THP_ENABLED, mode, sizeof(mode)) < 0)
		return fail_errno(r, THP_ENABLED);
	mode[strcspn(mode, "\n")] = '\0';
	/*
	 * Below 512 MiB of RAM (the harness guests have 512 MiB, a little
	 * less of it usable) hugepage_init() turns THP off whatever Kconfig
	 * chose: "[never]".  Ask for madvise mode, which serves this mapping
	 * and nothing else, and leave it so: "never" again would stop
	 * khugepaged, a task exit between the release and the scan.
	 */
	if (strstr(mode, "[never]")) {
		if (write_file(THP_ENABLED, "madvise"))
			return fail_errno(r, "setting transparent_hugepage/enabled to madvise");
		set = 1;
	}
	/* Twice the size, then only the aligned 2 MiB in the middle is kept. */
	p = mmap(NULL, 2 * HPAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return fail_errno(r, "mmap");
	a = (char *)(((uintptr_t)p + HPAGE - 1) & ~(uintptr_t)(HPAGE - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	munmap(a + HPAGE, (size_t)(p + 2 * HPAGE - (a + HPAGE)));
	if (madvise(a, HPAGE, MADV_HUGEPAGE))
		return fail_errno(r, "madvise(MADV_HUGEPAGE)");
	/* The first of these writes faults the huge page in. */
	for (i = 0; i < COPIES; i++)
		secret_derive(seed, ch->name, a + i * (HPAGE / COPIES) + OFFSET);
	touch(a);
	kb = anon_huge_kb(a);
	if (kb < (long)(HPAGE >> 10))
		return fail(r, "no huge page: AnonHugePages %ld kB (transparent_hugepage/enabled: %s%s)",
			    kb, mode, set ? ", set to madvise" : "");
	note(r, "%d copies in %d subpages of a 2 MiB huge page (AnonHugePages %ld kB%s), unmapped",
	     COPIES, COPIES, kb, set ? ", THP from never to madvise" : "");
	hold(r);
	if (munmap(a, HPAGE))
		return fail_errno(r, "munmap");
	return 0;
}

#define NR_HUGEPAGES	"/proc/sys/vm/nr_hugepages"

/* A field of /proc/meminfo ("HugePages_Free"), or -1. */
static long meminfo(const char *field)
{
	char line[256];
	size_t n = strlen(field);
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/*
 * A 2 MiB huge page of the hugetlb pool (one page reserved here), the
 * secret in COPIES of its subpages, unmapped: the page goes back to the
 * pool, not to the page allocator, and stays reserved for the scan.
 */
int ch_hugetlb(const struct channel *ch, struct result *r)
{
	char *a;
	long before, after;
	int i;

	if (access(NR_HUGEPAGES, F_OK))
		return errno == ENOENT ? skip(r, "kernel has no HUGETLBFS") :
					 fail_errno(r, NR_HUGEPAGES);
	if (meminfo("HugePages_Total") < 1 && write_file(NR_HUGEPAGES, "1"))
		return fail_errno(r, "reserving a huge page (" NR_HUGEPAGES ")");
	if (meminfo("HugePages_Total") < 1)
		return fail(r, "no huge page in the pool after writing 1 to " NR_HUGEPAGES);
	a = mmap(NULL, HPAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (a == MAP_FAILED)
		return fail_errno(r, "mmap(MAP_HUGETLB)");
	/* The first of these writes faults the huge page in. */
	for (i = 0; i < COPIES; i++)
		secret_derive(seed, ch->name, a + i * (HPAGE / COPIES) + OFFSET);
	touch(a);
	before = meminfo("HugePages_Free");
	note(r, "%d copies in %d subpages of a 2 MiB hugetlb page (HugePages_Free %ld while mapped), unmapped",
	     COPIES, COPIES, before);
	hold(r);
	if (munmap(a, HPAGE))
		return fail_errno(r, "munmap");
	/*
	 * Back in the pool: what the scan must look at.  Under sanitize_mem
	 * a work item clears the page before it rejoins the pool (0019), so
	 * it may take a moment; 10 s at most.
	 */
	for (i = 0; i < 100; i++) {
		after = meminfo("HugePages_Free");
		if (after == before + 1)
			break;
		usleep(100000);
	}
	if (after != before + 1)
		return fail(r, "HugePages_Free %ld 10 s after munmap, %ld before: the page did not go back to the pool",
			    after, before);
	return 0;
}
