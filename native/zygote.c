// arbor-zygote: the resident half of a confined workspace's sandbox (decision 0103).
//
// It runs inside one bubblewrap per workspace state (the mounts, the seccomp filter, the
// network), started once, and starts each confined command there as the first process of
// namespaces of the command's own: a user namespace (its uid and gid mapped to this one's), a
// mount namespace with a fresh /proc, an empty /tmp and /dev/shm, terminals of its own and the
// rest of /dev read-only, a PID namespace (when the command's
// first process ends, the kernel kills every process left in it, `setsid` ones included), an
// IPC namespace, and without the network a network namespace with only a loopback. Before the command's program starts, every capability is dropped (the
// bounding set too, so an exec cannot give them back) and no_new_privs is set. Anything that
// fails before the exec is written on the command's stderr and the command exits 126: a
// command never runs with less confinement than it was given.
//
// Wire (both ways little-endian; the host is `src/core/tools/sandbox/resident.ts`):
//   host -> zygote, on stdin:
//     'R' u32 id  u32 argc u32 envc u32 nshadow  then 1+argc+envc+nshadow strings (u32 length,
//         bytes): cwd, argv, env, and the stand-ins: where a protected folder is missing, each made
//         (in the command's namespaces) and covered with an empty read-only tmpfs for this command
//     'K' u32 id  u32 signal          kill the command's namespace (its first process gets SIGKILL)
//   zygote -> host, on stdout:
//     'H' u32 0   u32 length, bytes   hello: empty when a probe command could be set up, else why not
//     'S' u32 id  u32 pid             started (the pid in the sandbox's own PID namespace)
//     'E' u32 id  u32 length, bytes   could not be started (the zygote's fork failed)
//     'O' u32 id  u8 stream u32 length, bytes   output (1 stdout, 2 stderr)
//     'X' u32 id  u32 kind u32 value  ended, after its output is all sent: kind 0 exit code, 1 signal
// End of stdin: every command still running is killed and the zygote exits.
//
// Usage: arbor-zygote [--proc DIR] [--net-ns] [--keep PATH]...
//   --proc DIR  a /proc of the sandbox's PID namespace, where a command maps its ids (default /proc)
//   --net-ns    a network namespace per command (the sandbox has no network)
//   --keep PATH a folder under /tmp bound into the sandbox, bound again over each command's new /tmp
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_KEEP 64
#define MAX_CMDS 256
#define MAX_FRAME (64u << 20)

static const char *keep[MAX_KEEP];
static const char *proc_dir = "/proc";
static int own_net; // --net-ns: each command gets a network namespace of its own, with only a loopback
static int nkeep;
static uid_t uid;
static gid_t gid;

struct cmd {
  int used;
  uint32_t id;
  pid_t pid;      // 0 once reaped
  int out, err;   // -1 once at end of file
  int status_fd;  // where its first process writes the command's wait status
  int status;     // wait status, valid once reaped
};
static struct cmd cmds[MAX_CMDS];

// ---- output to the host (blocking writes of whole frames) ----

static void write_all(const void *buf, size_t len) {
  const char *p = buf;
  while (len > 0) {
    ssize_t n = write(1, p, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      _exit(0); // the host is gone: die-with-parent ends the rest
    }
    p += n;
    len -= (size_t)n;
  }
}

static void put_u32(char *b, uint32_t v) {
  b[0] = (char)(v & 0xff);
  b[1] = (char)((v >> 8) & 0xff);
  b[2] = (char)((v >> 16) & 0xff);
  b[3] = (char)((v >> 24) & 0xff);
}

static void frame3(char type, uint32_t id, uint32_t a, uint32_t b, int nb) {
  char h[13];
  h[0] = type;
  put_u32(h + 1, id);
  put_u32(h + 5, a);
  put_u32(h + 9, b);
  write_all(h, nb == 2 ? 13 : 9);
}

static void frame_text(char type, uint32_t id, const char *text) {
  char h[9];
  size_t len = strlen(text);
  h[0] = type;
  put_u32(h + 1, id);
  put_u32(h + 5, (uint32_t)len);
  write_all(h, 9);
  write_all(text, len);
}

// ---- the command's side of the fork: everything here ends in exec or _exit ----

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
    // A name without a folder is looked for on the sandbox's PATH, as spawn looks for it.
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
static pid_t start(int out, int err, int status_fd, const char *cwd, char **argv, char **envp, char **shadows) {
  pid_t pid = (pid_t)syscall(SYS_clone, NS_FLAGS | (own_net ? CLONE_NEWNET : 0) | SIGCHLD, 0, 0, 0, 0);
  if (pid == 0) init_process(out, err, status_fd, cwd, argv, envp, shadows);
  return pid;
}

// ---- the zygote ----

static void read_all(void *buf, size_t len) {
  char *p = buf;
  while (len > 0) {
    ssize_t n = read(0, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // The host closed its end (or died): nothing may outlive it.
      for (int i = 0; i < MAX_CMDS; i++)
        if (cmds[i].used && cmds[i].pid > 0) kill(cmds[i].pid, SIGKILL);
      _exit(0);
    }
    p += n;
    len -= (size_t)n;
  }
}

static uint32_t read_u32(void) {
  unsigned char b[4];
  read_all(b, 4);
  return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
}

static char *read_string(void) {
  uint32_t len = read_u32();
  if (len > MAX_FRAME) {
    dprintf(2, "arbor-zygote: a string of %u bytes is past the limit\n", len);
    _exit(2);
  }
  char *s = malloc(len + 1);
  if (!s) _exit(3);
  read_all(s, len);
  s[len] = 0;
  return s;
}

static struct cmd *find(uint32_t id) {
  for (int i = 0; i < MAX_CMDS; i++)
    if (cmds[i].used && cmds[i].id == id) return &cmds[i];
  return NULL;
}

static void run_request(void) {
  uint32_t id = read_u32();
  uint32_t argc = read_u32();
  uint32_t envc = read_u32();
  uint32_t nshadow = read_u32();
  if (argc == 0 || argc > 4096 || envc > 65536 || nshadow > 4096) {
    dprintf(2, "arbor-zygote: a request with %u arguments, %u variables and %u stand-ins\n", argc, envc, nshadow);
    _exit(2);
  }
  char *cwd = read_string();
  char **argv = calloc(argc + 1, sizeof *argv);
  char **envp = calloc(envc + 1, sizeof *envp);
  char **shadows = calloc(nshadow + 1, sizeof *shadows);
  if (!argv || !envp || !shadows) _exit(3);
  for (uint32_t i = 0; i < argc; i++) argv[i] = read_string();
  for (uint32_t i = 0; i < envc; i++) envp[i] = read_string();
  for (uint32_t i = 0; i < nshadow; i++) shadows[i] = read_string();
  struct cmd *slot = NULL;
  for (int i = 0; i < MAX_CMDS && !slot; i++)
    if (!cmds[i].used) slot = &cmds[i];
  int po[2] = {-1, -1}, pe[2] = {-1, -1}, ps[2] = {-1, -1};
  pid_t pid = -1;
  const char *why = NULL;
  if (!slot) {
    errno = EAGAIN;
    why = "too many commands at once in this sandbox";
  } else if (pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0 || pipe2(ps, O_CLOEXEC | O_NONBLOCK) != 0) {
    why = "pipe";
  } else {
    pid = start(po[1], pe[1], ps[1], cwd, argv, envp, shadows);
    if (pid < 0) why = "clone";
  }
  if (pid < 0) {
    char msg[256];
    snprintf(msg, sizeof msg, "%s: %s", why, strerror(errno));
    for (int i = 0; i < 2; i++) {
      if (po[i] >= 0) close(po[i]);
      if (pe[i] >= 0) close(pe[i]);
      if (ps[i] >= 0) close(ps[i]);
    }
    frame_text('E', id, msg);
  } else {
    close(po[1]);
    close(pe[1]);
    close(ps[1]);
    fcntl(po[0], F_SETFL, O_NONBLOCK);
    fcntl(pe[0], F_SETFL, O_NONBLOCK);
    *slot = (struct cmd){1, id, pid, po[0], pe[0], ps[0], 0};
    frame3('S', id, (uint32_t)pid, 0, 1);
  }
  free(cwd);
  for (uint32_t i = 0; i < argc; i++) free(argv[i]);
  for (uint32_t i = 0; i < envc; i++) free(envp[i]);
  for (uint32_t i = 0; i < nshadow; i++) free(shadows[i]);
  free(argv);
  free(envp);
  free(shadows);
}

static void kill_request(void) {
  uint32_t id = read_u32();
  read_u32(); // the signal asked for: a namespace's first process takes only SIGKILL from outside
  struct cmd *c = find(id);
  if (c && c->pid > 0) kill(c->pid, SIGKILL);
}

/** Forward what a command wrote, `max` bytes at most: how many, 0 at the end of that stream (closed), -1 when nothing is there now. */
static ssize_t relay(struct cmd *c, int *fd, uint8_t stream, size_t max) {
  static char buf[65536];
  ssize_t n;
  do n = read(*fd, buf, max < sizeof buf ? max : sizeof buf);
  while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EAGAIN) return -1;
  if (n <= 0) {
    close(*fd);
    *fd = -1;
    return 0;
  }
  char h[10];
  h[0] = 'O';
  put_u32(h + 1, c->id);
  h[5] = (char)stream;
  put_u32(h + 6, (uint32_t)n);
  write_all(h, 10);
  write_all(buf, (size_t)n);
  return n;
}

/**
 * The command's namespace has ended (its first process is reaped only once every process in it
 * has exited): what they wrote is all in the pipe now. Send that, and close it: a copy of the
 * write end held outside the namespace (passed over a Unix socket where no seccomp filter loads)
 * neither keeps the command's end from the host nor makes more of its output.
 */
static void drain(struct cmd *c, int *fd, uint8_t stream) {
  if (*fd < 0) return;
  int left = 0;
  if (ioctl(*fd, FIONREAD, &left) != 0) left = 0;
  while (left > 0) {
    ssize_t n = relay(c, fd, stream, (size_t)left);
    if (n <= 0) break;
    left -= (int)n;
  }
  if (*fd >= 0) {
    close(*fd);
    *fd = -1;
  }
}

static void finish_if_done(struct cmd *c) {
  if (c->pid != 0 || c->out >= 0 || c->err >= 0) return;
  int st = c->status;
  if (WIFSIGNALED(st)) frame3('X', c->id, 1, (uint32_t)WTERMSIG(st), 2);
  else frame3('X', c->id, 0, (uint32_t)WEXITSTATUS(st), 2);
  c->used = 0;
}

static void reap(void) {
  for (;;) {
    int st;
    pid_t pid = waitpid(-1, &st, WNOHANG);
    if (pid <= 0) return;
    for (int i = 0; i < MAX_CMDS; i++) {
      if (cmds[i].used && cmds[i].pid == pid) {
        cmds[i].pid = 0;
        cmds[i].status = st;
        // Its first process ended normally after writing the command's own status; otherwise
        // (killed, or it could not set up) its own status is the command's.
        unsigned char b[4];
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && read(cmds[i].status_fd, b, 4) == 4)
          cmds[i].status = (int)((uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24));
        close(cmds[i].status_fd);
        cmds[i].status_fd = -1;
        drain(&cmds[i], &cmds[i].out, 1);
        drain(&cmds[i], &cmds[i].err, 2);
        finish_if_done(&cmds[i]);
      }
    }
  }
}

/** One command set up as every command will be, and its exit awaited: an empty string, or why it failed. */
static void hello(void) {
  int pe[2];
  if (pipe2(pe, O_CLOEXEC) != 0) {
    frame_text('H', 0, "pipe failed");
    return;
  }
  pid_t pid = start(pe[1], pe[1], pe[1], "/", NULL, NULL, NULL);
  close(pe[1]);
  if (pid < 0) {
    char msg[256];
    snprintf(msg, sizeof msg, "new namespaces for a command could not be made here: %s", strerror(errno));
    close(pe[0]);
    frame_text('H', 0, msg);
    return;
  }
  char msg[1024];
  size_t len = 0;
  for (;;) {
    ssize_t n = read(pe[0], msg + len, sizeof msg - 1 - len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || (len += (size_t)n) >= sizeof msg - 1) break;
  }
  msg[len] = 0;
  close(pe[0]);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0) frame_text('H', 0, "");
  else frame_text('H', 0, len > 0 ? msg : "the probe command failed");
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc && nkeep < MAX_KEEP) keep[nkeep++] = argv[++i];
    else if (strcmp(argv[i], "--proc") == 0 && i + 1 < argc) proc_dir = argv[++i];
    else if (strcmp(argv[i], "--net-ns") == 0) own_net = 1;
    else {
      dprintf(2, "arbor-zygote: unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  uid = geteuid();
  gid = getegid();
  // The zygote cannot be read or traced by the commands it starts (same uid, other namespaces).
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  signal(SIGPIPE, SIG_IGN);
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigprocmask(SIG_BLOCK, &mask, NULL);
  int sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0) {
    frame_text('H', 0, "signalfd failed");
    return 1;
  }
  hello();
  static struct pollfd fds[2 + 2 * MAX_CMDS];
  static struct cmd *owner[2 + 2 * MAX_CMDS];
  static int which[2 + 2 * MAX_CMDS];
  for (;;) {
    int n = 0;
    fds[n++] = (struct pollfd){0, POLLIN, 0};
    fds[n++] = (struct pollfd){sfd, POLLIN, 0};
    for (int i = 0; i < MAX_CMDS; i++) {
      if (!cmds[i].used) continue;
      if (cmds[i].out >= 0) {
        owner[n] = &cmds[i];
        which[n] = 1;
        fds[n++] = (struct pollfd){cmds[i].out, POLLIN, 0};
      }
      if (cmds[i].err >= 0) {
        owner[n] = &cmds[i];
        which[n] = 2;
        fds[n++] = (struct pollfd){cmds[i].err, POLLIN, 0};
      }
    }
    if (poll(fds, (nfds_t)n, -1) < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    for (int i = 2; i < n; i++) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      struct cmd *c = owner[i];
      int *fd = which[i] == 1 ? &c->out : &c->err;
      if (*fd == fds[i].fd && relay(c, fd, (uint8_t)which[i], SIZE_MAX) == 0) finish_if_done(c);
    }
    if (fds[1].revents & POLLIN) {
      struct signalfd_siginfo si;
      while (read(sfd, &si, sizeof si) > 0) {
      }
      reap();
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      unsigned char type;
      read_all(&type, 1);
      if (type == 'R') run_request();
      else if (type == 'K') kill_request();
      else {
        dprintf(2, "arbor-zygote: unknown request %u\n", type);
        return 2;
      }
    }
  }
}
