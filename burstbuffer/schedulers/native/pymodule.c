/* The Python extension module around one of the policies' C engines (setup.py): compiled and linked with the
   engine's source (easy_pass.c, plan_engine.c or ga.c), it makes the shared library an importable module
   burstbuffer.schedulers.native.BB_MODULE, so that installing the package builds it (a platform wheel carries
   it). The module itself is empty: the glue (burstbuffer/schedulers/_*_native.py, burstbuffer.cbuild) loads the
   module's file with ctypes and calls the engine's functions. BB_MODULE: the module's name, defined by setup.py. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define BB_CAT2(a, b) a##b
#define BB_CAT(a, b) BB_CAT2(a, b)
#define BB_STR2(a) #a
#define BB_STR(a) BB_STR2(a)

static struct PyModuleDef bb_module = {
    PyModuleDef_HEAD_INIT, "burstbuffer.schedulers.native." BB_STR(BB_MODULE),
    "A C engine of burstbuffer's policies, called through ctypes (burstbuffer.cbuild).", 0,
    NULL, NULL, NULL, NULL, NULL
};

PyMODINIT_FUNC BB_CAT(PyInit_, BB_MODULE)(void) { return PyModuleDef_Init(&bb_module); }
