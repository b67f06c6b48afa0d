import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Registered on the Temporal server (dev/scripts/lib/services.ts); operators search tasks by these in the UI. */
export const TASK_ID = defineSearchAttributeKey('TaskId', SearchAttributeType.KEYWORD);
export const ACCOUNT_ID = defineSearchAttributeKey('AccountId', SearchAttributeType.KEYWORD);
export const MODEL = defineSearchAttributeKey('Model', SearchAttributeType.KEYWORD);
