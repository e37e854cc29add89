import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { formatIp, parseIp } from '../addr/ip.js';
import type { ProbeTarget, RunAs } from './probe-plan.js';

/** A probe connection opened, or why not, as `attempt.ts` classifies it. */
export type Opened =
  | { readonly kind: 'connected'; readonly socket: Socket }
  | { readonly kind: 'error'; readonly code: string }
  | { readonly kind: 'no-answer'; readonly stage: 'connect' }
  | { readonly kind: 'aborted' };

/**
 * The child's whole program: shed any capability, connect, then hand the connected socket back over the IPC channel
 * (SCM_RIGHTS) and exit. It reads only /proc/self/status and needs nothing but the node binary. As another uid it
 * cannot be signalled by the validator (kill() across uids needs CAP_KILL), so it leaves by itself:
 * at its own deadline, and as soon as the channel closes (the validator done with it, or gone).
 */
const CHILD = [
  "const net=require('node:net');const fs=require('node:fs');",
  'const [host,port,family,local,ms]=process.argv.slice(1);',
  'setTimeout(()=>process.exit(3),Number(ms));',
  "process.once('disconnect',()=>process.exit(0));",
  // A non-root parent's capabilities are ambient, and the kernel keeps the ambient set across a
  // setuid from one non-root uid to another: the child sheds them by passing through uid 0, since
  // leaving uid 0 for a non-root uid clears the permitted, effective and ambient sets. It connects
  // only once /proc says it holds none.
  "const none=()=>{const t=fs.readFileSync('/proc/self/status','utf8');return /^CapEff:\\s*0+$/m.test(t)&&/^CapAmb:\\s*0+$/m.test(t);};",
  'if(!none()){try{const u=process.getuid();process.setuid(0);process.setuid(u);}catch{}}',
  "if(!none()){process.send({kind:'error',code:'EPERM'},()=>process.exit(0));}else{",
  'const s=net.connect({host,port:Number(port),family:Number(family),localAddress:local});',
  "s.once('connect',()=>{s.pause();process.send({kind:'connected'},s,()=>process.exit(0));});",
  "s.once('error',(e)=>process.send({kind:'error',code:String(e.code||'EIO')},()=>process.exit(0)));}",
].join('');

/**
 * Opens the probe connection from a child process running as `as`: the mesh's rules match a
 * packet's owner by the uid and gid of the process that created its socket, and the nat OUTPUT
 * hook decides at the SYN, so the connection is the application's (or the proxy's) from its first
 * packet. The connected socket comes back to this process, which finishes the handshake itself.
 * Spawning as another uid needs CAP_SETUID and CAP_SETGID; without them this answers EPERM.
 */
export function connectAs(target: ProbeTarget, as: RunAs, timeoutMs: number, signal: AbortSignal): Promise<Opened> {
  const until = performance.now() + timeoutMs;
  const opened = turn.then(() => {
    const left = until - performance.now();
    if (signal.aborted) return { opened: { kind: 'aborted' } as const, exited: Promise.resolve() };
    if (left <= 0) return { opened: { kind: 'no-answer', stage: 'connect' } as const, exited: Promise.resolve() };
    return spawnChild(target, as, left, signal);
  });
  // One child at a time: the validator's memory limit has room for one more node process, not several.
  turn = opened.then(async (child) => child.exited).catch(() => undefined);
  return opened.then(async (child) => child.opened);
}

let turn: Promise<unknown> = Promise.resolve();

interface Child {
  readonly opened: Promise<Opened> | Opened;
  readonly exited: Promise<void>;
}

function spawnChild(target: ProbeTarget, as: RunAs, timeoutMs: number, signal: AbortSignal): Child {
  const args = [
    '-e',
    CHILD,
    formatIp(target.destination),
    String(target.port),
    target.family === 'ipv4' ? '4' : '6',
    target.family === 'ipv4' ? '0.0.0.0' : '::',
    // Later than this process's own timer, so an attempt ends as silence, never as a child that quit.
    String(Math.max(1, Math.ceil(timeoutMs)) + CHILD_GRACE_MS),
  ];
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, args, {
      uid: as.uid,
      gid: as.gid,
      env: {},
      cwd: '/',
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    });
  } catch (error) {
    return {
      opened: { kind: 'error', code: (error as NodeJS.ErrnoException).code ?? 'EPERM' },
      exited: Promise.resolve(),
    };
  }
  // Only an exit ends the turn: an 'error' also follows a kill() refused with EPERM, and that child
  // is still alive. A child that never started (no pid) has nothing to wait for. The bound is the
  // child's own deadline plus a margin, in case even that was starved.
  // A refused kill() (EPERM) is reported as an 'error' event: expected here, never a crash.
  child.on('error', () => undefined);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => {
      if (child.pid === undefined) resolve();
    });
    setTimeout(resolve, timeoutMs + CHILD_GRACE_MS + EXIT_MARGIN_MS).unref();
  });
  return { opened: awaitChild(child, target, timeoutMs, signal), exited };
}

const EXIT_MARGIN_MS = 2000;
/** How long the child outlives the attempt's own deadline when nothing closes its channel first. */
const CHILD_GRACE_MS = 500;

function awaitChild(child: ChildProcess, target: ProbeTarget, timeoutMs: number, signal: AbortSignal): Promise<Opened> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (opened: Opened): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      // The socket, once here, is this process's own descriptor: the child has nothing left to do.
      // Closing the channel makes it leave without a signal this process may not be allowed to send.
      if (child.connected) child.disconnect();
      child.kill('SIGKILL');
      resolve(opened);
    };
    const onAbort = (): void => finish({ kind: 'aborted' });
    const timer = setTimeout(() => finish({ kind: 'no-answer', stage: 'connect' }), timeoutMs);
    signal.addEventListener('abort', onAbort, { once: true });
    child.once('error', (error: NodeJS.ErrnoException) => finish({ kind: 'error', code: error.code ?? 'EIO' }));
    child.on('message', (message: unknown, handle: unknown) => {
      const sent = message as { kind?: unknown; code?: unknown } | null;
      if (sent?.kind === 'connected' && handle && typeof handle === 'object' && 'localPort' in handle)
        finish(connectedTo(handle as Socket, target));
      else finish({ kind: 'error', code: typeof sent?.code === 'string' ? sent.code.slice(0, 32) : 'EIO' });
    });
    child.once('exit', (code, signalName) =>
      finish({ kind: 'error', code: `the probe child exited (${signalName ?? `code ${code}`}) before connecting` }),
    );
  });
}

/**
 * The socket the child hands back counts only if it is connected to the target it was given
 * (getpeername: a redirect is invisible to the client, so the peer is the address dialled). Any
 * other socket, a listener, a UNIX socket or one dialled elsewhere, is destroyed and is an error.
 */
export function connectedTo(socket: Socket, target: ProbeTarget): Opened {
  const peer = socket.remoteAddress;
  const port = socket.remotePort;
  const family = socket.remoteFamily === 'IPv6' ? 'ipv6' : socket.remoteFamily === 'IPv4' ? 'ipv4' : undefined;
  const wanted = formatIp(target.destination);
  const parsed = peer === undefined ? undefined : parseIp(peer);
  if (family === target.family && parsed && formatIp(parsed) === wanted && port === target.port)
    return { kind: 'connected', socket };
  socket.destroy();
  const seen = peer === undefined ? 'no peer' : `${peer}:${port ?? '?'}`;
  return {
    kind: 'error',
    code: `the probe child handed back a socket connected to ${seen}, not ${wanted}:${target.port}`,
  };
}
