import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A memory cgroup of the test's own, limited as a container's `resources.limits.memory` is. */
export interface MemoryCgroup {
  readonly dir: string;
  readonly version: 1 | 2;
  /** The shell line that moves the shell into the cgroup (then `exec` the program). */
  readonly enter: string;
  /** Times the kernel's OOM killer killed a process of the cgroup. */
  oomKills(): number;
  /** The cgroup's peak usage, bytes. */
  peakBytes(): number;
  remove(): void;
}

const ROOT = '/sys/fs/cgroup';

/** Where the memory controller is: the v2 tree if it holds it, else the v1 memory hierarchy. */
function memoryHierarchy(): { version: 1 | 2; base: string } {
  for (const mount of [ROOT, join(ROOT, 'unified')]) {
    const controllers = join(mount, 'cgroup.controllers');
    if (existsSync(controllers) && readFileSync(controllers, 'utf8').split(/\s+/).includes('memory')) {
      const own = /^0::(.*)$/m.exec(readFileSync('/proc/self/cgroup', 'utf8'))?.[1] ?? '/';
      return { version: 2, base: join(mount, own) };
    }
  }
  const own = /^\d+:(?:[^:]*,)?memory(?:,[^:]*)?:(.*)$/m.exec(readFileSync('/proc/self/cgroup', 'utf8'))?.[1] ?? '/';
  return { version: 1, base: join(ROOT, 'memory', own) };
}

/**
 * A child of this process's memory cgroup, `limitBytes` without swap. On cgroup v2 the parent
 * must already delegate the memory controller (subtree_control): without it the child has no
 * memory.max and this throws, naming the file.
 */
export function memoryCgroup(name: string, limitBytes: number): MemoryCgroup {
  const { version, base } = memoryHierarchy();
  const dir = join(base, name);
  mkdirSync(dir);
  const write = (file: string, value: string) => writeFileSync(join(dir, file), value);
  const read = (file: string) => readFileSync(join(dir, file), 'utf8');
  if (version === 2) {
    write('memory.max', String(limitBytes));
    if (existsSync(join(dir, 'memory.swap.max'))) write('memory.swap.max', '0');
  } else {
    write('memory.limit_in_bytes', String(limitBytes));
    if (existsSync(join(dir, 'memory.memsw.limit_in_bytes'))) write('memory.memsw.limit_in_bytes', String(limitBytes));
  }
  const field = (text: string, key: string) => Number(new RegExp(`^${key} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
  return {
    dir,
    version,
    enter: `echo $$ > ${join(dir, 'cgroup.procs')}`,
    oomKills: () =>
      version === 2 ? field(read('memory.events'), 'oom_kill') : field(read('memory.oom_control'), 'oom_kill'),
    peakBytes: () =>
      Number(
        version === 2
          ? existsSync(join(dir, 'memory.peak'))
            ? read('memory.peak')
            : read('memory.current')
          : read('memory.max_usage_in_bytes'),
      ),
    remove: () => rmdirSync(dir),
  };
}
