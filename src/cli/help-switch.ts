/** `--help`, `-h` or `--version`, alone or with a value: a person asking, never a verdict. */
export const isHelpOrVersionSwitch = (arg: string): boolean => /^(?:--help|-h|--version)(?:=|$)/.test(arg);
