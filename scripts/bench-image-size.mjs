#!/usr/bin/env node
// `npm run bench` part: the image's size, uncompressed (as the runtime unpacks it) and compressed
// (gzip of `docker save`, about what a registry transfers), beside its base. Prints figures;
// asserts nothing. The anchors (Istio's proxyv2, which carries istio-validation, and Linkerd's
// proxy image, which carries linkerd-network-validator) cannot be pulled here: their published
// sizes are quoted in the README, not measured.
//   node scripts/bench-image-size.mjs [image]
import { execFileSync, spawn } from 'node:child_process';

const image = process.argv[2] ?? process.env.INTERLOCK_IMAGE ?? 'mesh-interlock:dev';
const inspect = (name, format) =>
  execFileSync('docker', ['image', 'inspect', '-f', format, name], { encoding: 'utf8' }).trim();

/** Bytes of `docker save NAME | gzip -6`, streamed (nothing is written to disk). */
function compressedBytes(name) {
  return new Promise((resolve, reject) => {
    const save = spawn('docker', ['save', name], { stdio: ['ignore', 'pipe', 'inherit'] });
    const gzip = spawn('gzip', ['-6', '-c'], { stdio: ['pipe', 'pipe', 'inherit'] });
    save.stdout.pipe(gzip.stdin);
    let bytes = 0;
    gzip.stdout.on('data', (chunk) => (bytes += chunk.length));
    gzip.on('close', (code) => (code === 0 ? resolve(bytes) : reject(new Error(`gzip exited ${code}`))));
  });
}

const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;
const base = inspect(image, '{{ index .Config.Labels "org.opencontainers.image.base.name" }}');
const rows = [
  [image, Number(inspect(image, '{{.Size}}')), await compressedBytes(image)],
  [`${base} (base)`, Number(inspect(base, '{{.Size}}')), await compressedBytes(base)],
];
console.log('image size (uncompressed as unpacked; compressed: gzip -6 of docker save)');
for (const [name, size, gz] of rows)
  console.log(`  ${name.padEnd(40)} uncompressed ${mb(size).padStart(9)}   compressed ${mb(gz).padStart(9)}`);
console.log(
  `  added by the project: ${mb(rows[0][1] - rows[1][1])} uncompressed; target <= 120 MB uncompressed for the whole image`,
);
