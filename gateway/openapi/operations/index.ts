import type { Operation } from '../registry';
import { chatOperations } from './chat';
import { mediaOperations } from './media';
import { accountOperations } from './account';
import { adminOperations } from './admin';
import { batchOperations } from './batches';

/** Every operation of the public and management API, in the order the reference shows them. */
export const OPERATIONS: Operation[] = [...chatOperations, ...mediaOperations, ...accountOperations, ...batchOperations, ...adminOperations];
