import { execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { chmodSync, closeSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCommand, STACK_LINE } from './cli-run.js';

// Issue 21, item 6: KUBECONFIG and the files it names (CA, client certificate and key, token),
// and the service account's files, are read as `explain` reads a dump: regular files only, opened
// without blocking, bounded in size. A FIFO must not hang `validate --report-event` (nor `node`),
// /dev/zero must not replace the verdict's exit code with an abort.
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function workDir(): string {
  const dir = mkdtempSync(join(tmpdir(), `interlock-kubecreds-${process.pid}-`));
  chmodSync(dir, 0o755);
  dirs.push(dir);
  return dir;
}

function fifo(dir: string, name: string): string {
  const path = join(dir, name);
  execFileSync('mkfifo', [path]);
  return path;
}

/** A kubeconfig whose user reads `field` from `path` (a file path, as kubeconfig allows). */
function kubeconfigNaming(
  dir: string,
  field: 'tokenFile' | 'client-certificate' | 'certificate-authority',
  path: string,
): string {
  const cluster = field === 'certificate-authority' ? `    certificate-authority: ${path}\n` : '';
  const user = field === 'certificate-authority' ? '    token: t\n' : `    ${field}: ${path}\n`;
  const file = join(dir, 'kubeconfig');
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n${cluster}`,
      `users:\n- name: u\n  user:\n${user}`,
      'contexts:\n- name: x\n  context:\n    cluster: c\n    user: u\n    namespace: default',
      'current-context: x',
      '',
    ].join('\n'),
  );
  return file;
}

/** A configuration error (exit 64: generic needs the two ports) with --report-event: the Event is tried, no packet is sent. */
const MISCONFIGURED = ['validate', '--report-event', '--mesh', 'generic', '--termination-log', '/dev/null'];
const POD_ENV = { POD_NAME: 'web-1', POD_NAMESPACE: 'default' };

describe('validate --report-event reads its cluster credentials within bounds', () => {
  it('KUBECONFIG is a FIFO with no writer: refused at once, the verdict (64) stands', async () => {
    const dir = workDir();
    const run = await runCommand(MISCONFIGURED, { env: { ...POD_ENV, KUBECONFIG: fifo(dir, 'kubeconfig') } });
    expect(run.hung).toBe(false);
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toMatch(/not reported.*not a regular file/);
  });

  it('KUBECONFIG is /dev/zero: refused, not read until the heap dies', async () => {
    const run = await runCommand(MISCONFIGURED, { env: { ...POD_ENV, KUBECONFIG: '/dev/zero' } });
    expect(run.hung).toBe(false);
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toMatch(/not reported.*not a regular file/);
    expect(run.stderr).not.toMatch(STACK_LINE);
  });

  it('a kubeconfig whose tokenFile is a FIFO, or whose client certificate is /dev/zero: refused', async () => {
    const dir = workDir();
    for (const config of [
      kubeconfigNaming(dir, 'tokenFile', fifo(dir, 'token')),
      kubeconfigNaming(workDir(), 'client-certificate', '/dev/zero'),
      kubeconfigNaming(workDir(), 'certificate-authority', fifo(workDir(), 'ca.crt')),
    ]) {
      const run = await runCommand(MISCONFIGURED, { env: { ...POD_ENV, KUBECONFIG: config } });
      expect(run.hung).toBe(false);
      expect(run.exitCode).toBe(64);
      expect(run.stderr).toMatch(/not reported.*not a regular file/);
    }
  });

  it('a kubeconfig larger than the cap is refused by its size, not parsed', async () => {
    const dir = workDir();
    const path = join(dir, 'huge-kubeconfig');
    const fd = openSync(path, 'w');
    ftruncateSync(fd, 64 * 1024 * 1024);
    closeSync(fd);
    const run = await runCommand(MISCONFIGURED, { env: { ...POD_ENV, KUBECONFIG: path } });
    expect(run.hung).toBe(false);
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toMatch(/not reported.*larger than/);
  });
});

describe('interlock node reads its cluster credentials within bounds', () => {
  it('KUBECONFIG is a FIFO: the agent refuses to start (66) instead of hanging', async () => {
    const dir = workDir();
    const run = await runCommand(['node', '--node-name', 'node-a', '--mesh', 'linkerd', '--listen', '127.0.0.1:0'], {
      env: { KUBECONFIG: fifo(dir, 'kubeconfig') },
    });
    expect(run.hung).toBe(false);
    expect(run.exitCode).toBe(66);
    expect(run.stderr).toMatch(/not a regular file/);
  });
});

describe('the in-cluster service account files', () => {
  it('a token that is a FIFO: the report gives up with a sentence naming the file', async () => {
    const dir = workDir();
    fifo(dir, 'token');
    writeFileSync(join(dir, 'ca.crt'), 'not used');
    // In a process of its own: a blocking read would stall the test worker itself, past any timeout.
    const script = [
      `import { reportFailureEvent } from ${JSON.stringify(REPORT_MODULE)};`,
      'const warnings = [];',
      'const log = { info() {}, warn(_, message) { warnings.push(message); } };',
      `const reported = await reportFailureEvent({ env: ${JSON.stringify({ ...POD_ENV, KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: '1' })}, reason: 'PodNetworkMissing', terminationMessage: 'PodNetworkMissing: x', log, serviceAccountDir: ${JSON.stringify(dir)} });`,
      'console.log(JSON.stringify({ reported, warnings }));',
    ].join('\n');
    const run = await runNode(['--input-type=module', '-e', script]);
    expect(run.hung).toBe(false);
    const { reported, warnings } = JSON.parse(run.stdout) as { reported: boolean; warnings: string[] };
    expect(reported).toBe(false);
    expect(warnings.join('\n')).toMatch(new RegExp(`${dir}/token.*not a regular file`));
  });
});

const REPORT_MODULE = fileURLToPath(new URL('../../dist/kube/report-failure-event.js', import.meta.url));

function runNode(args: string[]): Promise<{ stdout: string; hung: boolean }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  let hung = false;
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const guard = setTimeout(() => {
    hung = true;
    child.kill('SIGKILL');
  }, 20_000);
  return new Promise((resolve) =>
    child.on('close', () => {
      clearTimeout(guard);
      resolve({ stdout, hung });
    }),
  );
}
