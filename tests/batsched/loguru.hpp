// Minimal stand-in for the loguru logging header, covering only what batsched 1.4.0 uses:
// LOG_F(VERBOSITY, printf-format, ...), LOG_SCOPE_FUNCTION(VERBOSITY), loguru::g_stderr_verbosity and the
// named verbosities. A message is printed to stderr when its verbosity is <= g_stderr_verbosity (loguru's
// rule); FATAL aborts. No files, no threads, no scopes' indentation. Written for this project (not loguru's code).
#pragma once
#include <cstdio>
#include <cstdlib>

namespace loguru {
enum NamedVerbosity : int {
    Verbosity_OFF = -9, Verbosity_FATAL = -3, Verbosity_ERROR = -2, Verbosity_WARNING = -1,
    Verbosity_INFO = 0, Verbosity_0 = 0, Verbosity_1 = 1, Verbosity_2 = 2, Verbosity_3 = 3,
    Verbosity_4 = 4, Verbosity_5 = 5, Verbosity_6 = 6, Verbosity_7 = 7, Verbosity_8 = 8, Verbosity_9 = 9,
    Verbosity_MAX = 9
};
// One variable shared by every translation unit without a .cpp (C++11 has no inline variables).
template <typename T> struct SharedVerbosity { static int value; };
template <typename T> int SharedVerbosity<T>::value = Verbosity_0;
static int & g_stderr_verbosity = SharedVerbosity<void>::value;

template <typename... Args>
inline void log(int verbosity, const char * file, unsigned line, const char * format, Args... args)
{
    if (verbosity <= g_stderr_verbosity) {
        std::fprintf(stderr, "%s:%u %d| ", file, line, verbosity);
        std::fprintf(stderr, format, args...);
        std::fputc('\n', stderr);
    }
    if (verbosity == Verbosity_FATAL)
        std::abort();
}
} // namespace loguru

#define LOG_F(verbosity_name, ...) \
    ::loguru::log(::loguru::Verbosity_##verbosity_name, __FILE__, __LINE__, __VA_ARGS__)
#define LOG_SCOPE_FUNCTION(verbosity_name) \
    ::loguru::log(::loguru::Verbosity_##verbosity_name, __FILE__, __LINE__, "%s", __func__)
