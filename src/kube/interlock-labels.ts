import { VERSION } from '../config/version.js';

/** The Kubernetes recommended labels: `kubectl get -l app.kubernetes.io/part-of=interlock` finds every object printed. */
export type Component = 'node-agent' | 'webhook' | 'validator-events' | 'monitoring';

/**
 * The labels of every object Interlock prints. `name` stays what the selectors of earlier
 * releases match (a Deployment's or DaemonSet's selector is immutable, so an upgrade that changed
 * it could not be applied); `version` is never part of a selector for the same reason. A fresh
 * object each call: a YAML printer given one object twice would print an alias for the second.
 */
export function interlockLabels(name: string, component: Component): Record<string, string> {
  return {
    'app.kubernetes.io/name': name,
    'app.kubernetes.io/component': component,
    'app.kubernetes.io/part-of': 'interlock',
    'app.kubernetes.io/version': VERSION,
    'app.kubernetes.io/managed-by': 'interlock',
  };
}

/** The label keys every printed object carries (the tests and `interlock check` read them). */
export const RECOMMENDED_LABEL_KEYS = Object.keys(interlockLabels('x', 'webhook'));

/**
 * A pod labelled `interlock.dev/admission: disabled` is never sent to the admission webhook (its
 * objectSelector). The node agent's pods carry it: with --failure-policy Fail and the webhook
 * down, the agent must still start on the very nodes that need it.
 */
export const ADMISSION_OPT_OUT = { key: 'interlock.dev/admission', value: 'disabled' } as const;
