#pragma once
// Symbols of the kernel library that plugins and the CLI may use. Everything else stays hidden.
#if defined(MONET_KERNEL_BUILD)
#define MONET_API __attribute__((visibility("default")))
#else
#define MONET_API __attribute__((visibility("default")))
#endif
