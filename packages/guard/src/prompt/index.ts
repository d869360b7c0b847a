export { situationalPrefix } from "./situational-prefix";
export type { SituationalExtras } from "./situational-prefix";
