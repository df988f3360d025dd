// What arbor-zygote's two halves share (decision 0103): zygote.c (the wire and the loop) and
// confine.c (a command's first process, in its own namespaces).
#ifndef ARBOR_ZYGOTE_H
#define ARBOR_ZYGOTE_H
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/types.h>

#define MAX_KEEP 64

// From the command line, set once before the first command (zygote.c's main).
extern const char *keep[MAX_KEEP]; // --keep: folders under /tmp bound again over each command's /tmp
extern int nkeep;
extern const char *proc_dir; // --proc: a /proc of the sandbox's PID namespace
extern int own_net;          // --net-ns: a network namespace per command, with only a loopback
extern uid_t uid;            // the sandbox's uid and gid, mapped to themselves in each command's namespace
extern gid_t gid;

/** `v` little-endian into `b[0..3]`. */
void put_u32(char *b, uint32_t v);

/**
 * Clones a command's first process into new namespaces (fork semantics); its pid, or -1.
 * `argv` NULL: a probe that only sets up and exits 0. The command's wait status is written on
 * `status_fd`; anything failing before its exec goes to `err` and the command exits 126.
 */
pid_t start_command(int out, int err, int status_fd, const char *cwd, char **argv, char **envp, char **shadows);

#endif
