// The command's side of arbor-zygote's fork (decision 0103): the first process of a command's
// own namespaces confines itself, drops every capability and starts the command as pid 2.
// Everything here ends in exec or _exit; the zygote's loop and its wire are in zygote.c.
#include "zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void die(const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  dprintf(2, "arbor sandbox: %s (%s); the command did not run\n", msg, strerror(errno));
  _exit(126);
}

static void write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) die("open %s", path);
  size_t len = strlen(text);
  if (write(fd, text, len) != (ssize_t)len) die("write %s", path);
  close(fd);
}

static void mkdirs(const char *path) {
  char buf[4096];
  if (strlen(path) >= sizeof buf) die("path too long: %.100s", path);
  strcpy(buf, path);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = 0;
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) die("mkdir %s", buf);
    *p = '/';
  }
  if (mkdir(buf, 0755) != 0 && errno != EEXIST) die("mkdir %s", buf);
}

/** `path`'s mount again, read-only, its other flags as they are (the kernel keeps locked ones locked). */
static void remount_read_only(const char *path) {
  struct statvfs sv;
  if (statvfs(path, &sv) != 0) die("statvfs %s", path);
  unsigned long flags = MS_REMOUNT | MS_BIND | MS_RDONLY;
  if (sv.f_flag & ST_NOSUID) flags |= MS_NOSUID;
  if (sv.f_flag & ST_NODEV) flags |= MS_NODEV;
  if (sv.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
  if (sv.f_flag & ST_NOATIME) flags |= MS_NOATIME;
  if (sv.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
  if (sv.f_flag & ST_RELATIME) flags |= MS_RELATIME;
  if (mount(NULL, path, NULL, flags, NULL) != 0) die("remount %s read-only", path);
}

/** The confinement a command adds to the sandbox's: runs as its namespaces' first process. */
static void confine(char **shadows) {
  char map[64];
  // Its own user namespace: the same uid and gid as the sandbox's, and all capabilities in the
  // new namespaces only, until they are dropped below.
  char path[4200];
  snprintf(path, sizeof path, "%s/self/setgroups", proc_dir);
  write_file(path, "deny");
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
  snprintf(path, sizeof path, "%s/self/uid_map", proc_dir);
  write_file(path, map);
  snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
  snprintf(path, sizeof path, "%s/self/gid_map", proc_dir);
  write_file(path, map);
  // The paths under /tmp that stay visible, held before the new /tmp covers them.
  int held[MAX_KEEP];
  for (int i = 0; i < nkeep; i++) {
    held[i] = open(keep[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (held[i] < 0) die("open %s", keep[i]);
  }
  // A /proc of the new PID namespace: `ps` sees this command's processes only. Read-only,
  // as the sandbox's own /proc under it is (the kernel refuses a less restricted one).
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, NULL) != 0) die("mount /proc");
  if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0) die("mount /tmp");
  for (int i = 0; i < nkeep; i++) {
    char from[64];
    mkdirs(keep[i]);
    snprintf(from, sizeof from, "/proc/self/fd/%d", held[i]);
    if (mount(from, keep[i], NULL, MS_BIND | MS_REC, NULL) != 0) die("bind %s", keep[i]);
    close(held[i]);
  }
  // /dev is the sandbox's, shared by its commands: this command's shared memory and terminals
  // are its own, and nothing can be left in /dev for another (the device nodes stay usable).
  if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") != 0) die("mount /dev/shm");
  if (mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620") != 0) die("mount /dev/pts");
  remount_read_only("/dev");
  // Stand-ins: nothing can be made where a protected folder is missing. The folder is made here,
  // in this command's namespaces, not by the host: a command running meanwhile can swap a folder
  // on the path for a link between the host's walk and now, and here everything outside the
  // workspace is read-only, as it was for bubblewrap making it. The mount goes on the folder
  // itself, never through a link in its place.
  for (char **p = shadows; p && *p; p++) {
    if (mkdir(*p, 0755) != 0 && errno != EEXIST) die("make the stand-in %s", *p);
    int fd = open(*p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) die("open the stand-in %s", *p);
    char at[64];
    snprintf(at, sizeof at, "/proc/self/fd/%d", fd);
    if (mount("tmpfs", at, "tmpfs", MS_NOSUID | MS_NODEV | MS_RDONLY, "mode=755") != 0) die("mount a stand-in at %s", *p);
    close(fd);
  }
}

/** Drop every capability for good: the bounding set, ambient, then the sets themselves. */
static void drop_caps(void) {
  for (int cap = 0; cap <= 63; cap++) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) die("drop capability %d", cap);
  }
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) die("clear ambient capabilities");
  struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2];
  memset(data, 0, sizeof data);
  if (syscall(SYS_capset, &hdr, data) != 0) die("drop capabilities");
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) die("set no_new_privs");
}

static void close_from(int lowest) {
#ifdef SYS_close_range
  if (syscall(SYS_close_range, lowest, ~0U, 0) == 0) return;
#endif
  for (int fd = lowest; fd < 65536; fd++) close(fd);
}

static const int NS_FLAGS = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC;

/** The new network namespace's loopback, up (as bubblewrap brings up its own). */
static void loopback_up(void) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) die("socket for the loopback");
  struct ifreq req;
  memset(&req, 0, sizeof req);
  strcpy(req.ifr_name, "lo");
  if (ioctl(fd, SIOCGIFFLAGS, &req) != 0) die("read the loopback's flags");
  req.ifr_flags |= IFF_UP | IFF_RUNNING;
  if (ioctl(fd, SIOCSIFFLAGS, &req) != 0) die("bring the loopback up");
  close(fd);
}

/**
 * The command's namespaces' first process (pid 1 there), `argv` NULL for a probe that only sets
 * up. It confines, drops every capability, starts the command as pid 2 and reaps until that one
 * ends, then writes its wait status on fd 3 and exits: the kernel then kills whatever the command
 * left. Being pid 1, it takes no signal from the command (the kernel shields a namespace's init),
 * and the command, being pid 2, keeps the ordinary signal semantics a shell expects.
 */
static void init_process(int out, int err, int status_fd, const char *cwd, char **argv, char **envp, char **shadows) {
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 || dup2(status_fd, 3) < 0) _exit(126);
  close_from(4);
  fcntl(3, F_SETFD, FD_CLOEXEC);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  signal(SIGPIPE, SIG_DFL);
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  confine(shadows);
  if (own_net) loopback_up();
  if (setsid() < 0) die("setsid");
  drop_caps();
  if (!argv) _exit(0);
  pid_t pid = fork();
  if (pid < 0) die("fork");
  if (pid == 0) {
    if (chdir(cwd) != 0) die("chdir %s", cwd);
    // A name without a folder is looked for on the command's own PATH, as spawn looks for it
    // (execvpe reads the caller's PATH, not envp's; without one in envp, the sandbox's).
    for (char **e = envp; e && *e; e++)
      if (strncmp(*e, "PATH=", 5) == 0 && setenv("PATH", *e + 5, 1) != 0) die("set PATH");
    execvpe(argv[0], argv, envp);
    die("exec %s", argv[0]);
  }
  close(0);
  close(1);
  close(2);
  for (;;) {
    int st;
    pid_t done = wait(&st);
    if (done < 0 && errno == EINTR) continue;
    if (done < 0) _exit(125);
    if (done != pid) continue;
    unsigned char b[4];
    put_u32((char *)b, (uint32_t)st);
    if (write(3, b, 4) != 4) _exit(125);
    _exit(0);
  }
}

/** Clone the command's first process into new namespaces (fork semantics); its pid, or -1. */
pid_t start_command(int out, int err, int status_fd, const char *cwd, char **argv, char **envp, char **shadows) {
  pid_t pid = (pid_t)syscall(SYS_clone, NS_FLAGS | (own_net ? CLONE_NEWNET : 0) | SIGCHLD, 0, 0, 0, 0);
  if (pid == 0) init_process(out, err, status_fd, cwd, argv, envp, shadows);
  return pid;
}
