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
#include "zygote.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CMDS 256
#define MAX_FRAME (64u << 20)

const char *keep[MAX_KEEP];
const char *proc_dir = "/proc";
int own_net;
int nkeep;
uid_t uid;
gid_t gid;

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

void put_u32(char *b, uint32_t v) {
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
    pid = start_command(po[1], pe[1], ps[1], cwd, argv, envp, shadows);
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
  pid_t pid = start_command(pe[1], pe[1], pe[1], "/", NULL, NULL, NULL);
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
