"""asyncpool: async-first actor pools, verification pools and worker groups on Ray."""
