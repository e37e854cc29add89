import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { formatIp } from '../addr/ip.js';
import type { ProbeTarget, RunAs } from './probe-plan.js';

/** A probe connection opened, or why not, as `attempt.ts` classifies it. */
export type Opened =
  | { readonly kind: 'connected'; readonly socket: Socket }
  | { readonly kind: 'error'; readonly code: string }
  | { readonly kind: 'no-answer'; readonly stage: 'connect' }
  | { readonly kind: 'aborted' };

/**
 * The child's whole program: connect, then hand the connected socket back over the IPC channel
 * (SCM_RIGHTS) and exit. It reads no file and needs nothing but the node binary.
 */
const CHILD = [
  "const net=require('node:net');",
  'const [host,port,family,local]=process.argv.slice(1);',
  'const s=net.connect({host,port:Number(port),family:Number(family),localAddress:local});',
  "s.once('connect',()=>{s.pause();process.send({kind:'connected'},s,()=>process.exit(0));});",
  "s.once('error',(e)=>process.send({kind:'error',code:String(e.code||'EIO')},()=>process.exit(0)));",
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
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  return { opened: awaitChild(child, timeoutMs, signal), exited };
}

function awaitChild(child: ChildProcess, timeoutMs: number, signal: AbortSignal): Promise<Opened> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (opened: Opened): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      // The socket, once here, is this process's own descriptor: the child has nothing left to do.
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
        finish({ kind: 'connected', socket: handle as Socket });
      else finish({ kind: 'error', code: typeof sent?.code === 'string' ? sent.code.slice(0, 32) : 'EIO' });
    });
    child.once('exit', (code, signalName) =>
      finish({ kind: 'error', code: `the probe child exited (${signalName ?? `code ${code}`}) before connecting` }),
    );
  });
}
