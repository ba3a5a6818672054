"""The op catalogue: one module per op group, each op a frozen ``Op`` subclass with its type rule."""
