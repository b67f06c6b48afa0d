/**
 * Listeners of one kind of event in this process, called synchronously in the order they were added
 * (a service tells what it changed; another keeps its caches in step: capabilities/accounts/auth-lookup.ts).
 * A listener must not throw.
 */
export class Signal<T> {
  private readonly listeners: Array<(value: T) => void> = [];

  /** Add a listener; returns what removes it. */
  listen(listener: (value: T) => void): () => void {
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i !== -1) this.listeners.splice(i, 1);
    };
  }

  emit(value: T): void {
    for (const listener of this.listeners) listener(value);
  }
}
