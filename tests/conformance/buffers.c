/* Buffers: clCreateFromD3D1xBuffer{KHR,NV} for every usage and bind flag that can share, sizes from
 * 17 bytes to over 1 MiB; data written by Direct3D, acquired, read, copied and modified by OpenCL
 * (clEnqueueCopyBuffer, a kernel), released and read back by Direct3D straight after the release (no
 * clFinish); the resource's reference count; CL_MEM_D3D1x_RESOURCE; and every creation error. */
#include "harness.h"

#include <stdlib.h>

typedef struct env {
    const sharing *s;
    gfx *g;
    cl_context ctx;
    cl_device_id dev;
    cl_command_queue q;
} env;

static void data_path(env *E, UINT size, UINT usage, UINT bind, UINT cpu, const char *label)
{
    const sharing *s = E->s;
    h_at("%s: %s, %u bytes", s->name, label, size);
    unsigned char *init = malloc(size), *want = malloc(size), *got = malloc(size), *patch = malloc(size);
    fill_pattern(init, size, size * 3 + usage * 7 + bind);
    fill_pattern(patch, size, size + 99);
    res r;
    CHECK_HR(gfx_buffer(E->g, &r, size, usage, bind, cpu, 0, NULL), S_OK);
    if (!r.p)
        goto out;
    gfx_write(E->g, &r, 0, init);
    ULONG refs = com_refcount(r.p);

    cl_int e = 1;
    cl_mem m = sh_create_buffer(s, E->ctx, CL_MEM_READ_WRITE, r.p, &e);
    CHECK_ERR(e, CL_SUCCESS);
    if (!m) {
        res_free(&r);
        goto out;
    }
    /* "This call will increment the internal Direct3D reference count on resource." */
    CHECK_EQ(com_refcount(r.p), refs + 1);
    /* "The size of the returned OpenCL buffer object is the same as the size of resource." */
    size_t msize = 0, ret = 0;
    CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof msize, &msize, NULL), CL_SUCCESS);
    CHECK(msize == size);
    cl_mem_object_type type = 0;
    CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_TYPE, sizeof type, &type, NULL), CL_SUCCESS);
    CHECK(type == CL_MEM_OBJECT_BUFFER);
    cl_context mctx = NULL;
    CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_CONTEXT, sizeof mctx, &mctx, NULL), CL_SUCCESS);
    CHECK(mctx == E->ctx);
    /* CL_MEM_D3D1x_RESOURCE "returns the resource argument specified when memobj was created". */
    void *back = NULL;
    CHECK_ERR(clGetMemObjectInfo(m, s->mem_resource, sizeof back, &back, &ret), CL_SUCCESS);
    CHECK(back == r.p);
    CHECK(ret == sizeof(void *));
    CHECK_EQ(com_refcount(r.p), refs + 1); /* the query hands out no reference */

    /* Direct3D's data is what OpenCL sees after the acquire. */
    CHECK_ERR(sh_acquire(s, E->q, 1, &m, 0, NULL, NULL), CL_SUCCESS);
    memset(got, 0, size);
    CHECK_ERR(clEnqueueReadBuffer(E->q, m, CL_TRUE, 0, size, got, 0, NULL, NULL), CL_SUCCESS);
    long d = first_diff(got, init, size);
    if (d >= 0)
        h_fail(__FILE__, __LINE__, "OpenCL read of D3D data differs at byte %ld", d);
    else
        h_pass();

    /* OpenCL modifies it: +1 on every byte (kernel), then a patch copied in from a plain CL buffer. */
    cl_kernel k = h_kernel(E->ctx, E->dev, "inc_bytes");
    cl_mem tmp = clCreateBuffer(E->ctx, CL_MEM_READ_WRITE, size, NULL, &e);
    CHECK_ERR(e, CL_SUCCESS);
    size_t poff = size / 3, plen = size / 3 ? size / 3 : 1;
    if (plen > 4000)
        plen = 4000;
    memcpy(want, init, size);
    if (k && tmp) {
        cl_uint n = size;
        clSetKernelArg(k, 0, sizeof m, &m);
        clSetKernelArg(k, 1, sizeof n, &n);
        size_t gsz = size;
        CHECK_ERR(clEnqueueNDRangeKernel(E->q, k, 1, NULL, &gsz, NULL, 0, NULL, NULL), CL_SUCCESS);
        for (size_t i = 0; i < size; i++)
            want[i] = (unsigned char)(init[i] + 1);
        /* Round trip through tmp: the whole buffer out, a patch written into tmp, the patch back in. */
        CHECK_ERR(clEnqueueCopyBuffer(E->q, m, tmp, 0, 0, size, 0, NULL, NULL), CL_SUCCESS);
        CHECK_ERR(clEnqueueWriteBuffer(E->q, tmp, CL_FALSE, poff, plen, patch, 0, NULL, NULL), CL_SUCCESS);
        CHECK_ERR(clEnqueueCopyBuffer(E->q, tmp, m, poff, poff, plen, 0, NULL, NULL), CL_SUCCESS);
        memcpy(want + poff, patch, plen);
    }
    /* Released, then read by Direct3D at once: the release must order D3D after the CL work. */
    CHECK_ERR(sh_release(s, E->q, 1, &m, 0, NULL, NULL), CL_SUCCESS);
    memset(got, 0, size);
    if (gfx_read(E->g, &r, 0, got)) {
        d = first_diff(got, want, size);
        if (d >= 0)
            h_fail(__FILE__, __LINE__, "D3D read-back after release differs at byte %ld (got %u want %u)", d,
                   got[d], want[d]);
        else
            h_pass();
    }
    /* The plain buffer got the kernel's result too (the copy ran after the kernel). */
    if (tmp) {
        CHECK_ERR(clEnqueueReadBuffer(E->q, tmp, CL_TRUE, 0, size, got, 0, NULL, NULL), CL_SUCCESS);
        CHECK(memcmp(got + poff, patch, plen) == 0);
        CHECK(got[0] == (unsigned char)(init[0] + 1) || !k);
        clReleaseMemObject(tmp);
    }
    if (k)
        clReleaseKernel(k);
    CHECK_ERR(clFinish(E->q), CL_SUCCESS);
    CHECK_ERR(clReleaseMemObject(m), CL_SUCCESS);
    /* "decremented when the OpenCL reference count on the returned OpenCL memory object drops to zero" */
    CHECK_EQ(com_refcount(r.p), refs);
    res_free(&r);
out:
    free(init);
    free(want);
    free(got);
    free(patch);
}

/* The application releases its Direct3D reference before the cl_mem: the layer keeps its own. */
static void release_order(env *E)
{
    const sharing *s = E->s;
    h_at("%s: D3D object released before the cl_mem", s->name);
    unsigned char init[256], got[256];
    fill_pattern(init, sizeof init, 5);
    res r;
    CHECK_HR(gfx_buffer(E->g, &r, sizeof init, D3D11_USAGE_DEFAULT, D3D11_BIND_SHADER_RESOURCE, 0, 0, init), S_OK);
    if (!r.p)
        return;
    IUnknown_AddRef((IUnknown *)r.p); /* a second application reference, to observe the count */
    ULONG base = com_refcount(r.p);
    cl_int e;
    cl_mem m = sh_create_buffer(s, E->ctx, 0, r.p, &e);
    CHECK_ERR(e, CL_SUCCESS);
    if (!m) {
        com_release(r.p);
        res_free(&r);
        return;
    }
    CHECK_EQ(com_release(r.p), base); /* app: one left; the layer holds one */
    CHECK_ERR(sh_acquire(s, E->q, 1, &m, 0, NULL, NULL), CL_SUCCESS);
    CHECK_ERR(clEnqueueReadBuffer(E->q, m, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL), CL_SUCCESS);
    CHECK(memcmp(got, init, sizeof got) == 0);
    CHECK_ERR(sh_release(s, E->q, 1, &m, 0, NULL, NULL), CL_SUCCESS);
    CHECK_ERR(clFinish(E->q), CL_SUCCESS);
    CHECK_ERR(clReleaseMemObject(m), CL_SUCCESS);
    CHECK_EQ(com_refcount(r.p), base - 1);
    CHECK_EQ(com_release(r.p), 0);
    r.p = NULL;

    /* All application references gone while the cl_mem lives: it still works. */
    CHECK_HR(gfx_buffer(E->g, &r, sizeof init, D3D11_USAGE_DEFAULT, D3D11_BIND_SHADER_RESOURCE, 0, 0, init), S_OK);
    if (!r.p)
        return;
    m = sh_create_buffer(s, E->ctx, CL_MEM_READ_ONLY, r.p, &e);
    CHECK_ERR(e, CL_SUCCESS);
    CHECK_EQ(com_release(r.p), 1);
    r.p = NULL;
    if (m) {
        CHECK_ERR(sh_acquire(s, E->q, 1, &m, 0, NULL, NULL), CL_SUCCESS);
        memset(got, 0, sizeof got);
        CHECK_ERR(clEnqueueReadBuffer(E->q, m, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL), CL_SUCCESS);
        CHECK(memcmp(got, init, sizeof got) == 0);
        CHECK_ERR(sh_release(s, E->q, 1, &m, 0, NULL, NULL), CL_SUCCESS);
        CHECK_ERR(clFinish(E->q), CL_SUCCESS);
        CHECK_ERR(clReleaseMemObject(m), CL_SUCCESS);
    }
}

static void errors(env *E, gfx *second)
{
    const sharing *s = E->s;
    cl_int e;
    cl_mem m;
    res r, tex, imm;
    CHECK_HR(gfx_buffer(E->g, &r, 1024, D3D11_USAGE_DEFAULT, D3D11_BIND_VERTEX_BUFFER, 0, 0, NULL), S_OK);
    if (!r.p)
        return;
    ULONG refs = com_refcount(r.p);

    /* CL_INVALID_VALUE if values specified in flags are not valid (only READ_ONLY, WRITE_ONLY,
     * READ_WRITE may be used). */
    static const struct {
        cl_mem_flags flags;
        const char *name;
    } bad_flags[] = {
        {CL_MEM_USE_HOST_PTR, "USE_HOST_PTR"},
        {CL_MEM_ALLOC_HOST_PTR, "ALLOC_HOST_PTR"},
        {CL_MEM_COPY_HOST_PTR, "COPY_HOST_PTR"},
        {CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, "READ_WRITE|USE_HOST_PTR"},
        {CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, "READ_ONLY|WRITE_ONLY"},
        {CL_MEM_READ_WRITE | CL_MEM_READ_ONLY, "READ_WRITE|READ_ONLY"},
        {CL_MEM_HOST_NO_ACCESS, "HOST_NO_ACCESS"},
        {(cl_mem_flags)1 << 40, "bit 40"},
    };
    for (size_t i = 0; i < sizeof bad_flags / sizeof bad_flags[0]; i++) {
        h_at("%s: flags %s", s->name, bad_flags[i].name);
        e = CL_SUCCESS;
        m = sh_create_buffer(s, E->ctx, bad_flags[i].flags, r.p, &e);
        CHECK(m == NULL);
        CHECK_ERR(e, CL_INVALID_VALUE);
        if (m)
            clReleaseMemObject(m);
    }
    /* The three valid flags, and 0 (read-write, as every shipping implementation takes it). */
    static const cl_mem_flags good_flags[] = {0, CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY, CL_MEM_READ_WRITE};
    for (size_t i = 0; i < 4; i++) {
        h_at("%s: flags 0x%llx", s->name, (unsigned long long)good_flags[i]);
        m = sh_create_buffer(s, E->ctx, good_flags[i], r.p, &e);
        CHECK_ERR(e, CL_SUCCESS);
        if (m)
            clReleaseMemObject(m);
    }
    h_at("%s: refcount after flag errors", s->name);
    CHECK_EQ(com_refcount(r.p), refs);

    /* CL_INVALID_D3D1x_RESOURCE if a cl_mem from resource has already been created; after the first is
     * gone a new one can be made. */
    h_at("%s: duplicate", s->name);
    cl_mem first = sh_create_buffer(s, E->ctx, 0, r.p, &e);
    CHECK_ERR(e, CL_SUCCESS);
    e = CL_SUCCESS;
    m = sh_create_buffer(s, E->ctx, CL_MEM_READ_ONLY, r.p, &e);
    CHECK(m == NULL);
    CHECK_ERR(e, s->err_resource);
    /* ...whichever flavour created the first one. */
    sharing other_flavour;
    sharing_init(&other_flavour, s->platform, s->api, !s->nv);
    e = CL_SUCCESS;
    m = sh_create_buffer(&other_flavour, E->ctx, 0, r.p, &e);
    CHECK(m == NULL);
    CHECK_ERR(e, s->err_resource);
    if (first)
        clReleaseMemObject(first);
    m = sh_create_buffer(s, E->ctx, 0, r.p, &e);
    CHECK_ERR(e, CL_SUCCESS);
    if (m)
        clReleaseMemObject(m);
    CHECK_EQ(com_refcount(r.p), refs);

    /* CL_INVALID_D3D1x_RESOURCE if resource is not a Direct3D buffer resource: a texture, NULL, a COM
     * object that is no Direct3D resource. */
    h_at("%s: not a buffer", s->name);
    if (SUCCEEDED(gfx_tex2d(E->g, &tex, 8, 8, 1, 1, DXGI_FORMAT_R8G8B8A8_UNORM, 1, D3D11_USAGE_DEFAULT,
                            D3D11_BIND_SHADER_RESOURCE, 0, 0, NULL))) {
        e = CL_SUCCESS;
        m = sh_create_buffer(s, E->ctx, 0, tex.p, &e);
        CHECK(m == NULL);
        CHECK_ERR(e, s->err_resource);
        res_free(&tex);
    }
    e = CL_SUCCESS;
    m = sh_create_buffer(s, E->ctx, 0, NULL, &e);
    CHECK(m == NULL);
    CHECK_ERR(e, s->err_resource);
    fake_com fake;
    fake_com_init(&fake);
    e = CL_SUCCESS;
    m = sh_create_buffer(s, E->ctx, 0, &fake, &e);
    CHECK(m == NULL);
    CHECK_ERR(e, s->err_resource);
    CHECK(!fake.misused);
    CHECK_EQ(fake.refs, 1);

    /* ...if resource was created with D3D1x_USAGE_IMMUTABLE, */
    h_at("%s: IMMUTABLE", s->name);
    unsigned char data[256] = {1, 2, 3};
    CHECK_HR(gfx_buffer(E->g, &imm, sizeof data, D3D11_USAGE_IMMUTABLE, D3D11_BIND_VERTEX_BUFFER, 0, 0, data), S_OK);
    if (imm.p) {
        ULONG irefs = com_refcount(imm.p);
        e = CL_SUCCESS;
        m = sh_create_buffer(s, E->ctx, 0, imm.p, &e);
        CHECK(m == NULL);
        CHECK_ERR(e, s->err_resource);
        CHECK_EQ(com_refcount(imm.p), irefs);
        res_free(&imm);
    }
    /* ...or if context was not created against the same Direct3D device from which resource was
     * created. */
    if (second->device) {
        h_at("%s: resource of another device", s->name);
        res foreign;
        if (SUCCEEDED(gfx_buffer(second, &foreign, 64, D3D11_USAGE_DEFAULT, D3D11_BIND_VERTEX_BUFFER, 0, 0, NULL))) {
            e = CL_SUCCESS;
            m = sh_create_buffer(s, E->ctx, 0, foreign.p, &e);
            CHECK(m == NULL);
            CHECK_ERR(e, s->err_resource);
            res_free(&foreign);
        }
    }

    /* CL_INVALID_CONTEXT if context is not a valid context: NULL, */
    h_at("%s: invalid context", s->name);
    e = CL_SUCCESS;
    m = sh_create_buffer(s, NULL, 0, r.p, &e);
    CHECK(m == NULL);
    CHECK_ERR(e, CL_INVALID_CONTEXT);
    /* a context without a Direct3D device ("may be created ... if and only if the OpenCL context has
     * been created from a Direct3D device"), */
    cl_context plain = clCreateContext(NULL, 1, &E->dev, NULL, NULL, &e);
    if (plain) {
        e = CL_SUCCESS;
        m = sh_create_buffer(s, plain, 0, r.p, &e);
        CHECK(m == NULL);
        CHECK_ERR(e, CL_INVALID_CONTEXT);
        /* CL_MEM_D3D1x_RESOURCE on a cl_mem not created from Direct3D: CL_INVALID_D3D1x_RESOURCE. */
        h_at("%s: CL_MEM_D3D1x_RESOURCE on a plain buffer", s->name);
        cl_mem pb = clCreateBuffer(plain, CL_MEM_READ_WRITE, 64, NULL, &e);
        void *back = NULL;
        CHECK_ERR(clGetMemObjectInfo(pb, s->mem_resource, sizeof back, &back, NULL), s->err_resource);
        clReleaseMemObject(pb);
        clReleaseContext(plain);
    }
    /* and a context made for the other Direct3D version. */
    gfx og;
    memset(&og, 0, sizeof og);
    if (gfx_open(&og, s->api == API_D3D11 ? API_D3D10 : API_D3D11)) {
        h_at("%s: context of the other D3D version", s->name);
        cl_context_properties prop = s->api == API_D3D11 ? CL_CONTEXT_D3D10_DEVICE_KHR : CL_CONTEXT_D3D11_DEVICE_KHR;
        cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)s->platform, prop,
                                         (cl_context_properties)og.device, 0};
        cl_context octx = clCreateContext(props, 1, &E->dev, NULL, NULL, &e);
        CHECK_ERR(e, CL_SUCCESS);
        if (octx) {
            e = CL_SUCCESS;
            m = sh_create_buffer(s, octx, 0, r.p, &e);
            CHECK(m == NULL);
            CHECK_ERR(e, CL_INVALID_CONTEXT);
            clReleaseContext(octx);
        }
        gfx_close(&og);
    }
    /* errcode_ret may be NULL. */
    h_at("%s: errcode_ret NULL", s->name);
    CHECK(sh_create_buffer(s, E->ctx, CL_MEM_USE_HOST_PTR, r.p, NULL) == NULL);
    m = sh_create_buffer(s, E->ctx, 0, r.p, NULL);
    CHECK(m != NULL);

    /* Queries on a D3D buffer. */
    if (m) {
        h_at("%s: queries", s->name);
        void *back = NULL;
        /* CL_INVALID_VALUE if the size in bytes specified by param_value_size is less than the size of
         * the return type and param_value is not NULL. */
        CHECK_ERR(clGetMemObjectInfo(m, s->mem_resource, sizeof back - 1, &back, NULL), CL_INVALID_VALUE);
        size_t ret = 0;
        CHECK_ERR(clGetMemObjectInfo(m, s->mem_resource, 0, NULL, &ret), CL_SUCCESS);
        CHECK(ret == sizeof(void *));
        /* The other version's token names a resource this object was not created from. */
        cl_mem_info other = s->api == API_D3D11 ? CL_MEM_D3D10_RESOURCE_KHR : CL_MEM_D3D11_RESOURCE_KHR;
        cl_int other_err = s->api == API_D3D11 ? CL_INVALID_D3D10_RESOURCE_KHR : CL_INVALID_D3D11_RESOURCE_KHR;
        CHECK_ERR(clGetMemObjectInfo(m, other, sizeof back, &back, NULL), other_err);
        /* A buffer is not an image: "CL_INVALID_MEM_OBJECT if image is not a valid image object"; the
         * D3D error ("image was not created by clCreateFromD3D1xTexture2D/3D") is literally true too,
         * and the specs give no precedence, so either is accepted. */
        cl_uint sub = 0;
        e = clGetImageInfo(m, s->image_subresource, sizeof sub, &sub, NULL);
        if (e == CL_INVALID_MEM_OBJECT || e == s->err_resource)
            h_pass();
        else
            h_fail(__FILE__, __LINE__, "clGetImageInfo(buffer, SUBRESOURCE) = %s", cl_err_name(e));
        clReleaseMemObject(m);
    }
    CHECK_EQ(com_refcount(r.p), refs);
    res_free(&r);
}

int main(void)
{
    h_begin("buffers", 90);
    cl_platform_id p = h_platform();
    CHECK(p != NULL);
    for (int i = 0; p && i < 4; i++) {
        int api, nv;
        if (!h_combo(i, &api, &nv))
            continue;
        sharing s;
        CHECK(sharing_init(&s, p, api, nv));
        gfx g, second;
        if (!gfx_open(&g, api))
            continue;
        env E = {&s, &g, NULL, NULL, NULL};
        E.ctx = h_context(&s, &g, -1, &E.dev, NULL);
        if (E.ctx)
            E.q = h_queue(E.ctx, E.dev);
        if (E.q) {
            /* The reduced mode: the two smaller sizes, and 65537 bytes for the 1 MiB + 3 DYNAMIC buffer. */
            static const UINT sizes[] = {17, 4096, 65537, 1048579};
            for (size_t k = 0; k < H_BY_MODE(4u, 2u); k++)
                data_path(&E, sizes[k], D3D11_USAGE_DEFAULT, D3D11_BIND_SHADER_RESOURCE, 0, "DEFAULT/SHADER_RESOURCE");
            data_path(&E, 4096, D3D11_USAGE_DEFAULT, D3D11_BIND_VERTEX_BUFFER, 0, "DEFAULT/VERTEX_BUFFER");
            data_path(&E, 4096, D3D11_USAGE_DEFAULT, D3D11_BIND_INDEX_BUFFER, 0, "DEFAULT/INDEX_BUFFER");
            data_path(&E, 4096, D3D11_USAGE_DEFAULT, D3D11_BIND_CONSTANT_BUFFER, 0, "DEFAULT/CONSTANT_BUFFER");
            data_path(&E, 4096, D3D11_USAGE_DEFAULT, D3D11_BIND_STREAM_OUTPUT | D3D11_BIND_VERTEX_BUFFER, 0,
                      "DEFAULT/STREAM_OUTPUT|VERTEX_BUFFER");
            data_path(&E, 4096, D3D11_USAGE_DEFAULT, D3D11_BIND_RENDER_TARGET | D3D11_BIND_SHADER_RESOURCE, 0,
                      "DEFAULT/RENDER_TARGET|SHADER_RESOURCE");
            if (api == API_D3D11)
                data_path(&E, 4096, D3D11_USAGE_DEFAULT, D3D11_BIND_UNORDERED_ACCESS | D3D11_BIND_SHADER_RESOURCE,
                          0, "DEFAULT/UNORDERED_ACCESS|SHADER_RESOURCE");
            data_path(&E, 17, D3D11_USAGE_DYNAMIC, D3D11_BIND_VERTEX_BUFFER, D3D11_CPU_ACCESS_WRITE,
                      "DYNAMIC/VERTEX_BUFFER");
            data_path(&E, H_BY_MODE(1048579, 65537), D3D11_USAGE_DYNAMIC, D3D11_BIND_SHADER_RESOURCE, D3D11_CPU_ACCESS_WRITE,
                      "DYNAMIC/SHADER_RESOURCE");
            data_path(&E, 4096, D3D11_USAGE_DYNAMIC, D3D11_BIND_CONSTANT_BUFFER, D3D11_CPU_ACCESS_WRITE,
                      "DYNAMIC/CONSTANT_BUFFER");
            data_path(&E, 65537, D3D11_USAGE_STAGING, 0, D3D11_CPU_ACCESS_READ | D3D11_CPU_ACCESS_WRITE,
                      "STAGING/READ|WRITE");
            data_path(&E, 4096, D3D11_USAGE_STAGING, 0, D3D11_CPU_ACCESS_WRITE, "STAGING/WRITE");
            release_order(&E);
            memset(&second, 0, sizeof second);
            gfx_open(&second, api);
            errors(&E, &second);
            if (second.device)
                gfx_close(&second);
            clReleaseCommandQueue(E.q);
        }
        h_drop_program();
        if (E.ctx)
            clReleaseContext(E.ctx);
        gfx_close(&g);
    }
    return h_end();
}
