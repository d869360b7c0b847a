export { step, workflow, parallel } from "./step";
export type { StepOptions, ParallelBranch, ParallelResults } from "./step";
export { resumeRun, resumeInterrupted } from "./resume-run";
export type { ResumeRunOptions, ResumeInterruptedOptions, ResumeInterruptedReport, ResumedRun, LeftAloneRun, LeftAloneReason } from "./resume-run";
export { codeChangePolicy } from "./resumable-options";
export type { CodeChangePolicy, ResumableOptions, ExecutionOptions } from "./resumable-options";
export { StepValueError, RunPausedError, RunNotResumableError } from "./resumable-errors";
export type { RunPauseKind } from "./resumable-errors";
