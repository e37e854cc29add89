/** Annotations every patched pod carries. */
export const WEBHOOK_ANNOTATIONS: Readonly<Record<string, string>> = {};
