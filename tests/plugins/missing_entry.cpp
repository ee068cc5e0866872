// A shared library that forgot MONET_EXPORT_PLUGINS: it has no monet_plugin_entry symbol.
extern "C" __attribute__((visibility("default"))) int some_other_function() { return 42; }
