import { jsonShapeExcess, type JsonShapeLimits } from '../file/json-shape.js';

/**
 * Why `body` must not be parsed, or undefined: its shape past the bounds the server is sized for
 * (src/webhook/webhook-budget.ts sizes them).
 */
export function jsonShapeProblem(body: string, limits: JsonShapeLimits): string | undefined {
  const excess = jsonShapeExcess(body, limits);
  if (excess === undefined) return undefined;
  return excess.kind === 'depth'
    ? `the request body nests deeper than ${limits.maxDepth} levels (at character ${excess.at})`
    : `the request body holds more than ${limits.maxValues} JSON values`;
}
