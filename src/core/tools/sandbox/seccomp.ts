import * as os from 'node:os';

// The seccomp filter confined commands run under (bubblewrap's `--seccomp FD`): a classic BPF
// program, assembled here, that makes `socket(AF_UNIX, …)` fail with EPERM. A network
// namespace cuts IP but not the file system, and a Unix socket file (the Docker socket, the
// D-Bus session bus, an ssh-agent) is reached through the file system: a read-only mount
// does not stop `connect`. Denying the socket itself does, whatever its path (abstract
// sockets included). `socketpair` stays allowed for stream and seqpacket pairs: a connected
// pair inside the sandbox that reaches nothing outside (Codex draws the same line). A datagram pair
// (SOCK_DGRAM, or SOCK_RAW, which AF_UNIX makes a datagram socket) is denied: `sendto` on it takes
// any address, so it reached `/dev/log`, the journal and other host datagram sockets (decision
// 0123). `io_uring_setup` is
// denied too, because io_uring can create sockets without the `socket` system call.
// `socket(AF_VSOCK, …)` is denied as well: vsock belongs to no network namespace, and on a
// virtual machine (WSL2, Firecracker, a cloud VM's agent) it reaches the hypervisor's host and its
// services whatever the network setting (decision 0103, amended in session 48).

/** One BPF instruction: `struct sock_filter { u16 code; u8 jt; u8 jf; u32 k; }`. */
interface Insn {
  code: number;
  k: number;
  /** Labels to jump to when the comparison holds / fails (conditional jumps only). */
  jt?: string;
  jf?: string;
  /** A label naming this instruction. */
  label?: string;
}

const LD_W_ABS = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const RET_K = 0x06; // BPF_RET | BPF_K
const AND_K = 0x54; // BPF_ALU | BPF_AND | BPF_K

const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const RET_KILL_PROCESS = 0x80000000;
const EPERM = 1;
const AF_UNIX = 1;
const AF_VSOCK = 40;
/** `SOCK_TYPE_MASK`: the type without SOCK_NONBLOCK / SOCK_CLOEXEC. */
const SOCK_TYPE_MASK = 0xf;
const SOCK_STREAM = 1;
const SOCK_SEQPACKET = 5;

/** Offsets in `struct seccomp_data { int nr; u32 arch; u64 ip; u64 args[6]; }` (the low half of args[0] on little-endian). */
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16;
const ARG1_LOW = 24;

/** One ABI the kernel may run a process of this machine under, and the system calls the filter looks at there. */
interface Abi {
  name: string;
  /** AUDIT_ARCH_* value seccomp reports. */
  audit: number;
  /** `socket(domain, …)`: denied when domain is AF_UNIX or AF_VSOCK. */
  socket: number[];
  /** `socketpair(domain, type, …)`: allowed only for stream and seqpacket pairs. */
  socketpair: number[];
  /** Denied outright: socketcall (32-bit x86 multiplexes every socket call through it, with the arguments behind a pointer the filter cannot read) and io_uring_setup. */
  deny: number[];
}

const X32 = 0x40000000;
const ABIS: Readonly<Record<string, readonly Abi[]>> = {
  x64: [
    // x32 programs run with the x86_64 audit arch and bit 30 set in the number.
    { name: 'x86_64', audit: 0xc000003e, socket: [41, X32 | 41], socketpair: [53, X32 | 53], deny: [425, X32 | 425] },
    { name: 'i386', audit: 0x40000003, socket: [359], socketpair: [360], deny: [102, 425] },
  ],
  arm64: [
    { name: 'aarch64', audit: 0xc00000b7, socket: [198], socketpair: [199], deny: [425] },
    { name: 'arm', audit: 0x40000028, socket: [281], socketpair: [288], deny: [102, 425] },
  ],
};

/** The machines the filter is built for (Node's `process.arch` names). */
export const SECCOMP_ARCHES: readonly string[] = Object.keys(ABIS);

/** Whether this CPU's byte order is the one the filter's offsets assume (every supported arch is little-endian). */
const LITTLE_ENDIAN = os.endianness() === 'LE';

/**
 * The filter for `arch` (default this process's) as the bytes bubblewrap reads from its
 * `--seccomp` fd, or undefined when Arbor has no filter for that machine (the caller says so).
 * A process of any other ABI is killed: there is no ABI the filter does not know to slip through.
 */
export function unixSocketFilter(arch: string = process.arch): Buffer | undefined {
  const abis = ABIS[arch];
  if (!abis || !LITTLE_ENDIAN) return undefined;
  const prog: Insn[] = [{ code: LD_W_ABS, k: ARCH }];
  for (const abi of abis) prog.push({ code: JEQ_K, k: abi.audit, jt: abi.name });
  prog.push({ code: RET_K, k: RET_KILL_PROCESS });
  for (const abi of abis) {
    prog.push({ code: LD_W_ABS, k: NR, label: abi.name });
    for (const nr of abi.socket) prog.push({ code: JEQ_K, k: nr, jt: 'domain' });
    for (const nr of abi.socketpair) prog.push({ code: JEQ_K, k: nr, jt: 'pair' });
    for (const nr of abi.deny) prog.push({ code: JEQ_K, k: nr, jt: 'eperm' });
    prog.push({ code: RET_K, k: RET_ALLOW });
  }
  prog.push({ code: LD_W_ABS, k: ARG0_LOW, label: 'domain' });
  prog.push({ code: JEQ_K, k: AF_UNIX, jt: 'eperm' });
  prog.push({ code: JEQ_K, k: AF_VSOCK, jt: 'eperm' });
  prog.push({ code: RET_K, k: RET_ALLOW });
  prog.push({ code: LD_W_ABS, k: ARG1_LOW, label: 'pair' });
  prog.push({ code: AND_K, k: SOCK_TYPE_MASK });
  prog.push({ code: JEQ_K, k: SOCK_STREAM, jt: 'allow' });
  prog.push({ code: JEQ_K, k: SOCK_SEQPACKET, jt: 'allow' });
  prog.push({ code: RET_K, k: RET_ERRNO | EPERM });
  prog.push({ code: RET_K, k: RET_ALLOW, label: 'allow' });
  prog.push({ code: RET_K, k: RET_ERRNO | EPERM, label: 'eperm' });
  return assemble(prog);
}

/** Labels resolved to relative jumps (forward only, ≤ 255, as classic BPF requires); each instruction as 8 bytes. */
function assemble(prog: readonly Insn[]): Buffer {
  const at = new Map<string, number>();
  prog.forEach((insn, i) => {
    if (insn.label) at.set(insn.label, i);
  });
  const offset = (from: number, label: string | undefined): number => {
    if (label === undefined) return 0;
    const to = at.get(label);
    if (to === undefined || to <= from || to - from - 1 > 255) throw new Error(`seccomp: bad jump from ${from} to ${label}`);
    return to - from - 1;
  };
  const out = Buffer.alloc(prog.length * 8);
  prog.forEach((insn, i) => {
    out.writeUInt16LE(insn.code, i * 8);
    out.writeUInt8(offset(i, insn.jt), i * 8 + 2);
    out.writeUInt8(offset(i, insn.jf), i * 8 + 3);
    out.writeUInt32LE(insn.k >>> 0, i * 8 + 4);
  });
  return out;
}
