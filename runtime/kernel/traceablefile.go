package kernel

// TraceableFile is bpftrace's --traceable-functions FILENAME: the list of
// traceable kernel functions, in available_filter_functions' format
// ("symbol" or "symbol [module]" a line), read instead of tracefs'.
var TraceableFile string
