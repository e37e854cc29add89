/*
 * The container image reference grammar the kubelet and every registry client parse with:
 * github.com/distribution/reference v0.6.0: regexp.go's ReferenceRegexp, reference.go's
 * NameTotalLengthMax of 255, and normalize.go's refusal of a bare 64-hex identifier as a name.
 * (normalize.go takes an upper-case first component as a registry host, so `UPPER/x` is a valid
 * reference there and here.) Rewritten from the grammar, not copied.
 */
const ALPHANUMERIC = '[a-z0-9]+';
const SEPARATOR = '(?:[._]|__|[-]+)';
const PATH_COMPONENT = `${ALPHANUMERIC}(?:${SEPARATOR}${ALPHANUMERIC})*`;
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const HOST = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[(?:[a-fA-F0-9:]+)\\])`;
const DOMAIN = `${HOST}(?::[0-9]+)?`;
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = '[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}';
const REFERENCE = new RegExp(
  `^((?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*)(?::(${TAG}))?(?:@(${DIGEST}))?$`,
);
const NAME_TOTAL_LENGTH_MAX = 255;

/**
 * What is wrong with an image reference (`REGISTRY/mesh-interlock:0.1.0` or `...@sha256:<64 hex>`),
 * undefined when nothing is: anything a registry client refuses is refused here.
 */
export function imageReferenceProblem(text: string): string | undefined {
  const match = REFERENCE.exec(text);
  const name = match?.[1];
  if (name === undefined)
    return 'expected an image reference such as registry.example.com/mesh-interlock:0.1.0 (lower-case repository, optional :tag and @sha256:digest)';
  if (name.length > NAME_TOTAL_LENGTH_MAX)
    return `the repository name is longer than ${NAME_TOTAL_LENGTH_MAX} characters`;
  if (/^[a-f0-9]{64}$/.test(name)) return 'a 64-hex identifier is not a repository name';
  return undefined;
}
