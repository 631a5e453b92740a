// Public surface of core/rbac: the access decision.
export {
  AccessChecker,
  type AccessSubject,
  type AppTarget,
  accessForUser,
  type Decision,
  type MergedOptions,
  newAccessChecker,
  type UserAccess,
} from "./access-checker.ts";
export { allowMatches, denyMatches, type LabelSelector, type NodeLabels } from "./labels.ts";
export {
  compileAnchored,
  globMatch,
  isRegexValue,
  isSafePattern,
  MAX_MATCH_INPUT,
  matchValue,
} from "./match.ts";
export { expandLogin, type ParsedLogin, parseLogin, type TraitNamespace, type Traits } from "./template.ts";
