export {
  currentChain,
  depthOf,
  deniedTools,
  currentFrameData,
  withFrameData,
  runInFrame,
  DEFAULT_MAX_CYCLE_REPEATS,
  DEFAULT_MAX_CHAIN_DEPTH,
} from "./call-chain";
export type { ChainLimits, RunInFrameOptions } from "./call-chain";
export type { Frame, FrameKind } from "./frame";
