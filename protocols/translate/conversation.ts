import type { AssistantBlock, CanonicalMessage, UserBlock } from '../canonical/request';

/**
 * Builds the canonical message list, merging consecutive turns of one role
 * (chat sends each tool result as its own message; messages and Gemini
 * want them together in one user turn, before any text).
 */
export class Conversation {
  readonly messages: CanonicalMessage[] = [];

  user(blocks: UserBlock[]): void {
    if (blocks.length === 0) return;
    const last = this.messages[this.messages.length - 1];
    if (last?.role === 'user') last.content.push(...blocks);
    else this.messages.push({ role: 'user', content: blocks });
  }

  assistant(blocks: AssistantBlock[]): void {
    if (blocks.length === 0) return;
    const last = this.messages[this.messages.length - 1];
    if (last?.role === 'assistant') last.content.push(...blocks);
    else this.messages.push({ role: 'assistant', content: blocks });
  }
}
