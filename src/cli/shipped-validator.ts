import { validatorConfigOf } from '../compat/validator-config.js';
import { meshIdentity, type Mesh } from '../mesh/meshes.js';
import { podIdentityEnv, podInfoMount, validatorArgs } from '../inject/validator-container.js';
import type { ShippedValidator } from '../node-agent/validator-trust.js';
import { podinfoEnv, podinfoMount } from '../webhook/podinfo.js';

/**
 * The validator as `manifest`, `inject` and the webhook print it for `mesh`, read off the printers
 * themselves: the node agent trusts a run only in this shape (validator-trust.ts). A mesh whose
 * printed validator would not start without ports (generic) has no configuration here, so no run
 * of it counts toward the breaker.
 */
export function shippedValidator(mesh: Mesh): ShippedValidator {
  const variants = [false, true].flatMap((rulesCheck) =>
    [false, true].map((reportEvent) =>
      validatorConfigOf(undefined, validatorArgs({ mesh, image: '', rulesCheck, reportEvent }), {}),
    ),
  );
  const dropIn = meshIdentity(mesh).dropIn?.command;
  const meshMounts = meshIdentity(mesh).dropIn?.mountPaths ?? [];
  return {
    configs: variants.flatMap((variant) => (variant.ok ? [variant.value.config] : [])),
    commands: [undefined, ...(dropIn ? [dropIn] : [])],
    env: [...podIdentityEnv(), ...podinfoEnv()],
    mountPaths: [
      ...new Set([...[podInfoMount(), podinfoMount()].map((mount) => String(mount.mountPath)), ...meshMounts]),
    ],
  };
}
