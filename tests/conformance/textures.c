/* Textures: clCreateFromD3D1xTexture2D / Texture3D {KHR,NV} for every format of the table that the
 * device supports, sizes from 4x4 to 2048x2048, mip chains and array slices. Each subresource is an
 * image of the mip's size; CL_IMAGE_D3D1x_SUBRESOURCE, format and size queries; data written by Direct3D
 * is what OpenCL reads (clEnqueueReadImage, read_image{f,i,ui} kernels); data written by OpenCL
 * (write_image{f,i,ui} kernels, clEnqueueWriteImage, clEnqueueCopyImage in place) is what Direct3D reads
 * straight after the release. Formats outside the table, out-of-range subresources, multisampled and
 * immutable textures fail with the errors the specs name. */
#include "harness.h"

#include <math.h>
#include <stdlib.h>

typedef struct env {
    const sharing *s;
    gfx *g;
    cl_context ctx;
    cl_device_id dev;
    cl_command_queue q;
    int writes3d; /* cl_khr_3d_image_writes */
} env;

static int supported(env *E, cl_mem_object_type type, const fmt *f)
{
    cl_image_format list[256];
    cl_uint n = 0;
    clGetSupportedImageFormats(E->ctx, CL_MEM_READ_WRITE, type, 256, list, &n);
    for (cl_uint i = 0; i < n && i < 256; i++)
        if (list[i].image_channel_order == f->order && list[i].image_channel_data_type == f->type)
            return 1;
    return 0;
}

static cl_mem create_image(env *E, res *r, UINT sub, cl_mem_flags flags, cl_int *e)
{
    return r->kind == RES_TEX3D ? sh_create_tex3d(E->s, E->ctx, flags, r->p, sub, e)
                                : sh_create_tex2d(E->s, E->ctx, flags, r->p, sub, e);
}

/* Initial data of every subresource: the fill formula of variant 0, z counted from the subresource
 * index (so no two subresources hold the same bytes). */
static unsigned char *initial_data(const res *r, const fmt *f)
{
    size_t total = 0;
    for (UINT i = 0; i < res_subresources(r); i++)
        total += res_sub_bytes(r, i);
    unsigned char *data = malloc(total), *p = data;
    fill_params p0 = fill_params_for(f, 0);
    for (UINT i = 0; i < res_subresources(r); i++) {
        UINT w, h, d;
        res_sub_dims(r, i, &w, &h, &d);
        texels_encode(f, &p0, w, h, d, (int)(i * 16), p);
        p += res_sub_bytes(r, i);
    }
    return data;
}

static size_t sub_offset(const res *r, UINT sub)
{
    size_t off = 0;
    for (UINT i = 0; i < sub; i++)
        off += res_sub_bytes(r, i);
    return off;
}

/* Platform check with a plain image (once per program): CL_IMAGE_DEPTH of a 2D image created with
 * image_depth = 1 in its cl_image_desc, which is legal ("image_depth: The depth of the image in pixels.
 * This is only used if the image is a 3D image"). The query must still answer "For a ... 2D image ...
 * depth = 0"; Mesa rusticl 22.3 answers the description's value. dxcl creates its 2D images with
 * image_depth = 0, so shared images are held to the spec's 0 whatever the platform does here. */
static void plain_2d_depth_note(env *E)
{
    static int done;
    if (done)
        return;
    done = 1;
    cl_image_format imf = {CL_RGBA, CL_UNORM_INT8};
    cl_image_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = 16;
    desc.image_height = 8;
    desc.image_depth = 1;
    cl_int e;
    cl_mem m = clCreateImage(E->ctx, CL_MEM_READ_WRITE, &imf, &desc, NULL, &e);
    if (!m)
        return;
    size_t depth = 0;
    if (clGetImageInfo(m, CL_IMAGE_DEPTH, sizeof depth, &depth, NULL) == CL_SUCCESS && depth != 0)
        printf("NOTE platform: CL_IMAGE_DEPTH of a plain 2D image created with image_depth = 1 is %zu; the OpenCL "
               "spec says 0 (\"For a ... 2D image ... depth = 0\"; image_depth \"is only used if the image is a "
               "3D image\")\n",
               depth);
    clReleaseMemObject(m);
}

/* The image's queries against the subresource it was made from. */
static void check_image(env *E, cl_mem m, const res *r, UINT sub, const fmt *f)
{
    UINT w, h, d;
    res_sub_dims(r, sub, &w, &h, &d);
    cl_image_format imf = {0, 0};
    CHECK_ERR(clGetImageInfo(m, CL_IMAGE_FORMAT, sizeof imf, &imf, NULL), CL_SUCCESS);
    CHECK(imf.image_channel_order == f->order);
    CHECK(imf.image_channel_data_type == f->type);
    size_t v = 0;
    CHECK_ERR(clGetImageInfo(m, CL_IMAGE_ELEMENT_SIZE, sizeof v, &v, NULL), CL_SUCCESS);
    CHECK(v == fmt_texel_bytes(f));
    /* "The width and height of the returned OpenCL 2D image object are determined by the width and
     * height of subresource subresource of resource" (and depth, for 3D). */
    CHECK_ERR(clGetImageInfo(m, CL_IMAGE_WIDTH, sizeof v, &v, NULL), CL_SUCCESS);
    CHECK(v == w);
    CHECK_ERR(clGetImageInfo(m, CL_IMAGE_HEIGHT, sizeof v, &v, NULL), CL_SUCCESS);
    CHECK(v == h);
    CHECK_ERR(clGetImageInfo(m, CL_IMAGE_DEPTH, sizeof v, &v, NULL), CL_SUCCESS);
    CHECK(v == (r->kind == RES_TEX3D ? d : 0));
    plain_2d_depth_note(E);
    cl_mem_object_type t = 0;
    CHECK_ERR(clGetMemObjectInfo(m, CL_MEM_TYPE, sizeof t, &t, NULL), CL_SUCCESS);
    CHECK(t == (r->kind == RES_TEX3D ? CL_MEM_OBJECT_IMAGE3D : CL_MEM_OBJECT_IMAGE2D));
    cl_uint got_sub = 0xdead;
    size_t ret = 0;
    CHECK_ERR(clGetImageInfo(m, E->s->image_subresource, sizeof got_sub, &got_sub, &ret), CL_SUCCESS);
    CHECK(got_sub == sub);
    CHECK(ret == sizeof(cl_uint));
    void *back = NULL;
    CHECK_ERR(clGetMemObjectInfo(m, E->s->mem_resource, sizeof back, &back, NULL), CL_SUCCESS);
    CHECK(back == r->p);
}

static const char *kernel_suffix(const fmt *f)
{
    return f->cls == FC_UINT ? "ui" : f->cls == FC_SINT ? "i" : "f";
}

static int close_enough(float got, float want)
{
    return fabsf(got - want) <= 1e-6f + fabsf(want) * 2e-6f;
}

/* A plain OpenCL image of the same format, size and bytes: the platform's own behaviour, which a shared
 * image must match exactly. (PoCL 3.1 has image bugs of its own: read_imagei/ui of CL_R formats return
 * alpha 0, read_imagef and write_imagef of CL_R/CL_HALF_FLOAT are wrong. Those are the platform's, not
 * the layer's; they are printed as NOTE lines, and the shared image is held to the plain one.) */
static cl_mem plain_image(env *E, const fmt *f, UINT w, UINT h, UINT d, int is3d, const unsigned char *data)
{
    cl_image_format imf = {f->order, f->type};
    cl_image_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.image_type = is3d ? CL_MEM_OBJECT_IMAGE3D : CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = w;
    desc.image_height = h;
    desc.image_depth = is3d ? d : 0;
    cl_int e;
    cl_mem m = clCreateImage(E->ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, &imf, &desc, (void *)data, &e);
    if (!m)
        h_fail(__FILE__, __LINE__, "plain reference image: %s", cl_err_name(e));
    return m;
}

static int run_read(env *E, const char *name, cl_mem m, size_t n, UINT w, UINT h, UINT d, int is3d, float *out)
{
    cl_kernel k = h_kernel(E->ctx, E->dev, name);
    if (!k)
        return 0;
    cl_int e;
    cl_mem buf = clCreateBuffer(E->ctx, CL_MEM_READ_WRITE, n * 16, NULL, &e);
    clSetKernelArg(k, 0, sizeof m, &m);
    clSetKernelArg(k, 1, sizeof buf, &buf);
    size_t gsz[3] = {w, h, d};
    e = clEnqueueNDRangeKernel(E->q, k, is3d ? 3 : 2, NULL, gsz, NULL, 0, NULL, NULL);
    CHECK_ERR(e, CL_SUCCESS);
    CHECK_ERR(clEnqueueReadBuffer(E->q, buf, CL_TRUE, 0, n * 16, out, 0, NULL, NULL), CL_SUCCESS);
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    return e == CL_SUCCESS;
}

/* read_image{f,i,ui} over the whole image: the same results as on a plain image with the same bytes. */
static void kernel_read(env *E, cl_mem m, const fmt *f, UINT w, UINT h, UINT d, int is3d, const unsigned char *data)
{
    char name[32];
    snprintf(name, sizeof name, "read%s_%s", is3d ? "3d" : "2d", kernel_suffix(f));
    size_t n = (size_t)w * h * d;
    float *got = malloc(n * 16), *ref = malloc(n * 16);
    cl_mem plain = plain_image(E, f, w, h, d, is3d, data);
    if (plain && run_read(E, name, m, n, w, h, d, is3d, got) && run_read(E, name, plain, n, w, h, d, is3d, ref)) {
        long diff = first_diff(got, ref, n * 16);
        if (diff < 0)
            h_pass();
        else
            h_fail(__FILE__, __LINE__, "%s: texel %ld differs from the same read of a plain image", name, diff / 16);
        /* The platform against the host model (information only). */
        unsigned tb = fmt_texel_bytes(f);
        for (size_t i = 0; i < n; i++) {
            float vf[4];
            int32_t vi[4];
            texel_decode(f, data + i * tb, vf, vi);
            int ok = 1;
            for (int c = 0; c < 4; c++)
                ok &= f->cls == FC_UINT || f->cls == FC_SINT ? memcmp(&ref[i * 4 + c], &vi[c], 4) == 0
                                                              : close_enough(ref[i * 4 + c], vf[c]);
            if (!ok) {
                printf("NOTE platform: %s of %s on a plain image disagrees with the OpenCL spec at texel %zu\n",
                       name, f->name, i);
                break;
            }
        }
    }
    if (plain)
        clReleaseMemObject(plain);
    free(got);
    free(ref);
}

/* write_image{f,i,ui} of fill variant `variant` over the whole image; the model gets the bytes the same
 * kernel writes into a plain image of the format. */
static int kernel_fill(env *E, cl_mem m, const fmt *f, UINT w, UINT h, UINT d, int is3d, int variant,
                       unsigned char *model)
{
    fill_params p = fill_params_for(f, variant);
    size_t origin[3] = {0, 0, 0}, region[3] = {w, h, d};
    if (is3d && !E->writes3d) {
        /* No 3D image writes from kernels on this device: the same data through clEnqueueWriteImage. */
        texels_encode(f, &p, w, h, d, 0, model);
        CHECK_ERR(clEnqueueWriteImage(E->q, m, CL_TRUE, origin, region, 0, 0, model, 0, NULL, NULL), CL_SUCCESS);
        return 1;
    }
    char name[32];
    snprintf(name, sizeof name, "fill%s_%s", is3d ? "3d" : "2d", kernel_suffix(f));
    cl_mem plain = plain_image(E, f, w, h, d, is3d, model);
    cl_kernel k = h_kernel(E->ctx, E->dev, name);
    if (!k || !plain) {
        if (plain)
            clReleaseMemObject(plain);
        return 0;
    }
    clSetKernelArg(k, 1, sizeof(int), &p.mod);
    if (f->cls == FC_UINT)
        clSetKernelArg(k, 2, sizeof(cl_uint), &p.ubias);
    else
        clSetKernelArg(k, 2, sizeof(int), &p.bias);
    clSetKernelArg(k, 3, sizeof(int), &p.mul);
    if (f->cls != FC_UINT && f->cls != FC_SINT)
        clSetKernelArg(k, 4, sizeof(float), &p.scale);
    size_t gsz[3] = {w, h, d};
    clSetKernelArg(k, 0, sizeof m, &m);
    CHECK_ERR(clEnqueueNDRangeKernel(E->q, k, is3d ? 3 : 2, NULL, gsz, NULL, 0, NULL, NULL), CL_SUCCESS);
    clSetKernelArg(k, 0, sizeof plain, &plain);
    CHECK_ERR(clEnqueueNDRangeKernel(E->q, k, is3d ? 3 : 2, NULL, gsz, NULL, 0, NULL, NULL), CL_SUCCESS);
    CHECK_ERR(clEnqueueReadImage(E->q, plain, CL_TRUE, origin, region, 0, 0, model, 0, NULL, NULL), CL_SUCCESS);
    clReleaseKernel(k);
    clReleaseMemObject(plain);
    /* The platform against the host model (information only). */
    size_t bytes = (size_t)w * h * d * fmt_texel_bytes(f);
    unsigned char *host = malloc(bytes);
    texels_encode(f, &p, w, h, d, 0, host);
    long diff = first_diff(host, model, bytes);
    if (diff >= 0)
        printf("NOTE platform: %s of %s into a plain image disagrees with the OpenCL spec at texel %ld\n", name,
               f->name, diff / (long)fmt_texel_bytes(f));
    free(host);
    return 1;
}

/* The whole round trip for one subresource whose D3D data is `init` (tightly packed). */
static void image_path(env *E, res *r, UINT sub, const fmt *f, const unsigned char *init, int use_kernels)
{
    const sharing *s = E->s;
    UINT w, h, d;
    res_sub_dims(r, sub, &w, &h, &d);
    int is3d = r->kind == RES_TEX3D;
    size_t bytes = res_sub_bytes(r, sub), tb = fmt_texel_bytes(f);
    ULONG refs = com_refcount(r->p);
    cl_int e = 1;
    cl_mem m = create_image(E, r, sub, CL_MEM_READ_WRITE, &e);
    CHECK_ERR(e, CL_SUCCESS);
    if (!m)
        return;
    CHECK_EQ(com_refcount(r->p), refs + 1);
    check_image(E, m, r, sub, f);

    unsigned char *got = malloc(bytes), *model = malloc(bytes);
    CHECK_ERR(sh_acquire(s, E->q, 1, &m, 0, NULL, NULL), CL_SUCCESS);
    size_t origin[3] = {0, 0, 0}, region[3] = {w, h, d};
    memset(got, 0xcd, bytes);
    CHECK_ERR(clEnqueueReadImage(E->q, m, CL_TRUE, origin, region, 0, 0, got, 0, NULL, NULL), CL_SUCCESS);
    long diff = first_diff(got, init, bytes);
    if (diff >= 0)
        h_fail(__FILE__, __LINE__, "clEnqueueReadImage of D3D data differs at byte %ld", diff);
    else
        h_pass();
    memcpy(model, init, bytes);
    if (use_kernels) {
        kernel_read(E, m, f, w, h, d, is3d, init);
        kernel_fill(E, m, f, w, h, d, is3d, 1 + (int)(sub % 3), model);
    }
    /* clEnqueueWriteImage of a region in the middle. */
    size_t wo[3] = {w / 4, h / 4, is3d ? d / 4 : 0};
    size_t wr[3] = {w / 2 ? w / 2 : 1, h / 2 ? h / 2 : 1, is3d ? (d / 2 ? d / 2 : 1) : 1};
    unsigned char *patch = malloc(wr[0] * wr[1] * wr[2] * tb);
    fill_params p3 = fill_params_for(f, 3);
    texels_encode(f, &p3, (unsigned)wr[0], (unsigned)wr[1], (unsigned)wr[2], 5, patch);
    CHECK_ERR(clEnqueueWriteImage(E->q, m, CL_FALSE, wo, wr, 0, 0, patch, 0, NULL, NULL), CL_SUCCESS);
    for (size_t z = 0; z < wr[2]; z++)
        for (size_t y = 0; y < wr[1]; y++)
            memcpy(model + (((wo[2] + z) * h + wo[1] + y) * w + wo[0]) * tb, patch + ((z * wr[1] + y) * wr[0]) * tb,
                   wr[0] * tb);
    /* clEnqueueCopyImage within the image: the top rows over the bottom rows (no overlap). */
    if (h >= 2) {
        size_t half = h / 2;
        size_t so[3] = {0, 0, 0}, dst[3] = {0, h - half, 0}, cr[3] = {w, half, d};
        CHECK_ERR(clEnqueueCopyImage(E->q, m, m, so, dst, cr, 0, NULL, NULL), CL_SUCCESS);
        for (size_t z = 0; z < d; z++)
            for (size_t y = 0; y < half; y++)
                memmove(model + ((z * h + h - half + y) * w) * tb, model + ((z * h + y) * w) * tb, w * tb);
    }
    /* Released, then read by Direct3D straight away (no clFinish: the release orders D3D after it). */
    CHECK_ERR(sh_release(s, E->q, 1, &m, 0, NULL, NULL), CL_SUCCESS);
    memset(got, 0xcd, bytes);
    if (gfx_read(E->g, r, sub, got)) {
        diff = first_diff(got, model, bytes);
        if (diff >= 0) {
            long t = diff / (long)tb;
            h_fail(__FILE__, __LINE__, "D3D read-back after release differs at byte %ld (texel %ld: %02x%02x%02x%02x, "
                   "want %02x%02x%02x%02x)", diff, t, got[t * tb], got[t * tb + 1 % tb], got[t * tb + 2 % tb],
                   got[t * tb + 3 % tb], model[t * tb], model[t * tb + 1 % tb], model[t * tb + 2 % tb],
                   model[t * tb + 3 % tb]);
        }
        else
            h_pass();
    }
    free(patch);
    free(got);
    free(model);
    CHECK_ERR(clReleaseMemObject(m), CL_SUCCESS);
    CHECK_EQ(com_refcount(r->p), refs);
}

/* A table format outside NV's table (B8G8R8A8_UNORM) or one the device lacks (PoCL: the 12 CL_RG formats):
 * creation from subresource `sub` must fail, take no reference, and name the image-format error of the
 * decision in docs/errors.md ("Formats the device lacks"). */
static void expect_unsupported(env *E, res *r, UINT sub, int in_table)
{
    ULONG refs = com_refcount(r->p);
    cl_int e = CL_SUCCESS;
    cl_mem m = create_image(E, r, sub, CL_MEM_READ_WRITE, &e);
    CHECK(m == NULL);
    if (!in_table) {
        /* "CL_INVALID_IMAGE_FORMAT_DESCRIPTOR if the Direct3D texture format of resource is not listed in
         * table 9.13.4.1" (NV; B8G8R8A8_UNORM is not in NV's table). */
        CHECK_ERR(e, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
    } else {
        /* A table format the device lacks, both flavours: the core rule for creating an image,
         * CL_IMAGE_FORMAT_NOT_SUPPORTED "if the image_format is not supported"; what the Khronos CTS's d3d11
         * tests take as "skip". */
        CHECK_ERR(e, CL_IMAGE_FORMAT_NOT_SUPPORTED);
    }
    if (m)
        clReleaseMemObject(m);
    CHECK_EQ(com_refcount(r->p), refs);
}

/* One format: a 2D texture (16x8) and a 3D texture (8x4x3), one mip each. */
static void formats(env *E, int three_d)
{
    const sharing *s = E->s;
    for (size_t i = 0; i < sizeof fmt_table / sizeof fmt_table[0]; i++) {
        const fmt *f = &fmt_table[i];
        if (!fmt_selected(f))
            continue;
        h_at("%s: %s %s", s->name, three_d ? "3D" : "2D", f->name);
        res r;
        HRESULT hr;
        if (three_d) {
            res probe = {RES_TEX3D, s->api, NULL, 8, 4, 3, 1, 1, 1, f->dxgi, 0, 0, 0, 0};
            unsigned char *init = initial_data(&probe, f);
            hr = gfx_tex3d(E->g, &r, 8, 4, 3, 1, f->dxgi, D3D11_USAGE_DEFAULT, D3D11_BIND_SHADER_RESOURCE, 0, 0, init);
            free(init);
        } else {
            res probe = {RES_TEX2D, s->api, NULL, 16, 8, 1, 1, 1, 1, f->dxgi, 0, 0, 0, 0};
            unsigned char *init = initial_data(&probe, f);
            hr = gfx_tex2d(E->g, &r, 16, 8, 1, 1, f->dxgi, 1, D3D11_USAGE_DEFAULT, D3D11_BIND_SHADER_RESOURCE, 0, 0,
                           init);
            free(init);
        }
        CHECK_HR(hr, S_OK);
        if (!r.p)
            continue;
        int in_table = !(f->khr_only && s->nv);
        int can = supported(E, three_d ? CL_MEM_OBJECT_IMAGE3D : CL_MEM_OBJECT_IMAGE2D, f);
        if (in_table && can) {
            unsigned char *init = initial_data(&r, f);
            image_path(E, &r, 0, f, init, 1);
            free(init);
        } else {
            expect_unsupported(E, &r, 0, in_table);
        }
        res_free(&r);
    }
}

/* Every subresource of a texture with a mip chain (and array slices, for 2D): each its own image of
 * the mip's size, all acquired and released in one call each. */
static void mips_and_arrays(env *E, int three_d, UINT w, UINT h, UINT d_or_array, UINT mips, DXGI_FORMAT format,
                            int every_sub_path)
{
    const sharing *s = E->s;
    const fmt *f = fmt_find(format);
    h_at("%s: %s %ux%ux%u mips=%u %s", s->name, three_d ? "3D" : "2D", w, h, d_or_array, mips, f->name);
    res probe;
    memset(&probe, 0, sizeof probe);
    probe.kind = three_d ? RES_TEX3D : RES_TEX2D;
    probe.width = w;
    probe.height = h;
    probe.depth = three_d ? d_or_array : 1;
    probe.array = three_d ? 1 : d_or_array;
    probe.format = format;
    {
        /* MipLevels = 0 means the full chain: 1 + floor(log2(largest dimension)). */
        UINT m = w > h ? w : h, n = 1;
        if (three_d && d_or_array > m)
            m = d_or_array;
        while (m > 1) {
            m >>= 1;
            n++;
        }
        probe.mips = mips ? mips : n;
    }
    unsigned char *init = initial_data(&probe, f);
    res r;
    HRESULT hr = three_d ? gfx_tex3d(E->g, &r, w, h, d_or_array, mips, format, D3D11_USAGE_DEFAULT,
                                     D3D11_BIND_SHADER_RESOURCE, 0, 0, init)
                         : gfx_tex2d(E->g, &r, w, h, mips, d_or_array, format, 1, D3D11_USAGE_DEFAULT,
                                     D3D11_BIND_SHADER_RESOURCE, 0, 0, init);
    CHECK_HR(hr, S_OK);
    if (!r.p) {
        free(init);
        return;
    }
    CHECK(r.mips == probe.mips);
    int in_table = !(f->khr_only && s->nv);
    if (!in_table || !supported(E, three_d ? CL_MEM_OBJECT_IMAGE3D : CL_MEM_OBJECT_IMAGE2D, f)) {
        /* Skipped as formats() skips it: every subresource must fail with an image-format error. */
        for (UINT i = 0; i < res_subresources(&r); i++) {
            h_at("%s: %s %ux%ux%u mips=%u %s sub %u (unsupported)", s->name, three_d ? "3D" : "2D", w, h,
                 d_or_array, r.mips, f->name, i);
            expect_unsupported(E, &r, i, in_table);
        }
        free(init);
        res_free(&r);
        return;
    }
    UINT n = res_subresources(&r);
    ULONG refs = com_refcount(r.p);
    cl_mem *mems = calloc(n, sizeof *mems);
    cl_int e;
    for (UINT i = 0; i < n; i++) {
        UINT sw, sh, sd;
        res_sub_dims(&r, i, &sw, &sh, &sd);
        h_at("%s: %s %ux%ux%u mips=%u %s sub %u (mip %u, slice %u: %ux%ux%u) create", s->name, three_d ? "3D" : "2D",
             w, h, d_or_array, r.mips, f->name, i, i % r.mips, three_d ? 0 : i / r.mips, sw, sh, sd);
        mems[i] = create_image(E, &r, i, CL_MEM_READ_WRITE, &e);
        CHECK_ERR(e, CL_SUCCESS);
        if (mems[i])
            check_image(E, mems[i], &r, i, f);
        else
            n = i; /* stop at the first failure (the round trips below still try every subresource) */
    }
    h_at("%s: %s %s all %u subresources", s->name, three_d ? "3D" : "2D", f->name, n);
    /* Each creation "will increment the internal Direct3D reference count on resource". */
    CHECK_EQ(com_refcount(r.p), refs + n);
    /* One acquire and one release for all of them; each reads its own subresource's data. */
    if (n) {
        CHECK_ERR(sh_acquire(s, E->q, n, mems, 0, NULL, NULL), CL_SUCCESS);
        for (UINT i = 0; i < n; i++) {
            UINT sw, sh, sd;
            res_sub_dims(&r, i, &sw, &sh, &sd);
            size_t bytes = res_sub_bytes(&r, i);
            unsigned char *got = malloc(bytes);
            size_t origin[3] = {0, 0, 0}, region[3] = {sw, sh, sd};
            CHECK_ERR(clEnqueueReadImage(E->q, mems[i], CL_TRUE, origin, region, 0, 0, got, 0, NULL, NULL),
                      CL_SUCCESS);
            long diff = first_diff(got, init + sub_offset(&r, i), bytes);
            if (diff >= 0)
                h_fail(__FILE__, __LINE__, "subresource %u: OpenCL read differs at byte %ld", i, diff);
            else
                h_pass();
            free(got);
        }
        CHECK_ERR(sh_release(s, E->q, n, mems, 0, NULL, NULL), CL_SUCCESS);
    }
    for (UINT i = 0; i < n; i++)
        clReleaseMemObject(mems[i]);
    CHECK_EQ(com_refcount(r.p), refs);
    /* Then the full round trip, one subresource at a time (every one, or the first and the last two). */
    for (UINT i = 0; i < res_subresources(&r); i++) {
        UINT last = res_subresources(&r) - 1;
        if (!every_sub_path && i != 0 && i + 2 < last + 1)
            continue;
        UINT sw, sh, sd;
        res_sub_dims(&r, i, &sw, &sh, &sd);
        h_at("%s: %s %ux%ux%u mips=%u %s sub %u (mip %u, slice %u: %ux%ux%u) round trip", s->name,
             three_d ? "3D" : "2D", w, h, d_or_array, r.mips, f->name, i, i % r.mips, three_d ? 0 : i / r.mips, sw,
             sh, sd);
        image_path(E, &r, i, f, init + sub_offset(&r, i), 1);
    }
    free(mems);
    free(init);
    res_free(&r);
}

/* Usages other than DEFAULT, and MISC_SHARED (KHR: resources with and without it must both work). */
static void usages(env *E)
{
    const sharing *s = E->s;
    const fmt *f = fmt_find(DXGI_FORMAT_R8G8B8A8_UNORM);
    static const struct {
        UINT usage, bind, cpu, misc;
        const char *name;
    } cases[] = {
        {D3D11_USAGE_DEFAULT, D3D11_BIND_SHADER_RESOURCE | D3D11_BIND_RENDER_TARGET, 0, D3D11_RESOURCE_MISC_SHARED,
         "DEFAULT/MISC_SHARED"},
        {D3D11_USAGE_DEFAULT, D3D11_BIND_RENDER_TARGET, 0, 0, "DEFAULT/RENDER_TARGET"},
        {D3D11_USAGE_DYNAMIC, D3D11_BIND_SHADER_RESOURCE, D3D11_CPU_ACCESS_WRITE, 0, "DYNAMIC"},
        {D3D11_USAGE_STAGING, 0, D3D11_CPU_ACCESS_READ | D3D11_CPU_ACCESS_WRITE, 0, "STAGING"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        h_at("%s: 2D %s", s->name, cases[i].name);
        res r;
        CHECK_HR(gfx_tex2d(E->g, &r, 32, 16, 1, 1, f->dxgi, 1, cases[i].usage, cases[i].bind, cases[i].cpu,
                           cases[i].misc, NULL),
                 S_OK);
        if (!r.p)
            continue;
        unsigned char *init = initial_data(&r, f);
        gfx_write(E->g, &r, 0, init);
        image_path(E, &r, 0, f, init, 1);
        free(init);
        res_free(&r);
    }
    h_at("%s: 3D STAGING", s->name);
    res r;
    CHECK_HR(gfx_tex3d(E->g, &r, 8, 8, 4, 1, f->dxgi, D3D11_USAGE_STAGING, 0,
                       D3D11_CPU_ACCESS_READ | D3D11_CPU_ACCESS_WRITE, 0, NULL),
             S_OK);
    if (r.p) {
        unsigned char *init = initial_data(&r, f);
        gfx_write(E->g, &r, 0, init);
        image_path(E, &r, 0, f, init, 1);
        free(init);
        res_free(&r);
    }
}

static void expect_fail(env *E, res *r, UINT sub, int three_d, cl_mem_flags flags, cl_int want)
{
    cl_int e = CL_SUCCESS;
    cl_mem m = three_d ? sh_create_tex3d(E->s, E->ctx, flags, r ? r->p : NULL, sub, &e)
                       : sh_create_tex2d(E->s, E->ctx, flags, r ? r->p : NULL, sub, &e);
    CHECK(m == NULL);
    CHECK_ERR(e, want);
    if (m)
        clReleaseMemObject(m);
}

static void errors(env *E, gfx *second)
{
    const sharing *s = E->s;
    res t2, t3, buf, t1, ms, imm2, imm3;
    cl_int e;
    CHECK_HR(gfx_tex2d(E->g, &t2, 16, 8, 2, 3, DXGI_FORMAT_R8G8B8A8_UNORM, 1, D3D11_USAGE_DEFAULT,
                       D3D11_BIND_SHADER_RESOURCE, 0, 0, NULL),
             S_OK);
    CHECK_HR(gfx_tex3d(E->g, &t3, 8, 8, 8, 2, DXGI_FORMAT_R8G8B8A8_UNORM, D3D11_USAGE_DEFAULT,
                       D3D11_BIND_SHADER_RESOURCE, 0, 0, NULL),
             S_OK);
    if (!t2.p || !t3.p)
        return;
    ULONG refs2 = com_refcount(t2.p), refs3 = com_refcount(t3.p);

    /* CL_INVALID_VALUE if subresource is not a valid subresource index for resource. */
    h_at("%s: subresource out of range", s->name);
    expect_fail(E, &t2, 6, 0, 0, CL_INVALID_VALUE); /* 2 mips x 3 slices: 0..5 */
    expect_fail(E, &t2, 0xffffffffu, 0, 0, CL_INVALID_VALUE);
    expect_fail(E, &t3, 2, 1, 0, CL_INVALID_VALUE); /* 3D: subresource = mip */
    expect_fail(E, &t3, 0x80000000u, 1, 0, CL_INVALID_VALUE);
    /* CL_INVALID_VALUE if values specified in flags are not valid. */
    h_at("%s: flags", s->name);
    expect_fail(E, &t2, 0, 0, CL_MEM_USE_HOST_PTR, CL_INVALID_VALUE);
    expect_fail(E, &t2, 0, 0, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, CL_INVALID_VALUE);
    expect_fail(E, &t3, 0, 1, CL_MEM_COPY_HOST_PTR, CL_INVALID_VALUE);
    expect_fail(E, &t3, 0, 1, (cl_mem_flags)1 << 40, CL_INVALID_VALUE);

    /* CL_INVALID_D3D1x_RESOURCE if resource is not a Direct3D texture resource (of that dimension). */
    h_at("%s: wrong resource kind", s->name);
    if (SUCCEEDED(gfx_buffer(E->g, &buf, 256, D3D11_USAGE_DEFAULT, D3D11_BIND_VERTEX_BUFFER, 0, 0, NULL))) {
        expect_fail(E, &buf, 0, 0, 0, s->err_resource);
        expect_fail(E, &buf, 0, 1, 0, s->err_resource);
        res_free(&buf);
    }
    expect_fail(E, &t3, 0, 0, 0, s->err_resource); /* a 3D texture given to Texture2D */
    expect_fail(E, &t2, 0, 1, 0, s->err_resource); /* a 2D texture given to Texture3D */
    if (SUCCEEDED(gfx_tex1d(E->g, &t1, 64, DXGI_FORMAT_R8G8B8A8_UNORM, D3D11_USAGE_DEFAULT,
                            D3D11_BIND_SHADER_RESOURCE))) {
        expect_fail(E, &t1, 0, 0, 0, s->err_resource); /* no 1D textures in either extension */
        expect_fail(E, &t1, 0, 1, 0, s->err_resource);
        res_free(&t1);
    }
    expect_fail(E, NULL, 0, 0, 0, s->err_resource);
    expect_fail(E, NULL, 0, 1, 0, s->err_resource);
    fake_com fake;
    fake_com_init(&fake);
    res fr = {RES_TEX2D, s->api, &fake, 1, 1, 1, 1, 1, 1, DXGI_FORMAT_R8G8B8A8_UNORM, 0, 0, 0, 0};
    expect_fail(E, &fr, 0, 0, 0, s->err_resource);
    expect_fail(E, &fr, 0, 1, 0, s->err_resource);
    CHECK(!fake.misused);
    CHECK_EQ(fake.refs, 1);
    /* ...if resource is a multisampled texture, */
    h_at("%s: multisampled", s->name);
    CHECK_HR(gfx_tex2d(E->g, &ms, 16, 16, 1, 1, DXGI_FORMAT_R8G8B8A8_UNORM, 4, D3D11_USAGE_DEFAULT,
                       D3D11_BIND_RENDER_TARGET, 0, 0, NULL),
             S_OK);
    if (ms.p) {
        expect_fail(E, &ms, 0, 0, 0, s->err_resource);
        res_free(&ms);
    }
    /* ...if resource was created with D3D1x_USAGE_IMMUTABLE, */
    h_at("%s: IMMUTABLE", s->name);
    {
        const fmt *f = fmt_find(DXGI_FORMAT_R8G8B8A8_UNORM);
        res probe = {RES_TEX3D, s->api, NULL, 4, 4, 4, 1, 1, 1, f->dxgi, 0, 0, 0, 0};
        unsigned char *init = initial_data(&probe, f);
        CHECK_HR(gfx_tex2d(E->g, &imm2, 4, 4, 1, 1, f->dxgi, 1, D3D11_USAGE_IMMUTABLE, D3D11_BIND_SHADER_RESOURCE, 0,
                           0, init),
                 S_OK);
        CHECK_HR(gfx_tex3d(E->g, &imm3, 4, 4, 4, 1, f->dxgi, D3D11_USAGE_IMMUTABLE, D3D11_BIND_SHADER_RESOURCE, 0, 0,
                           init),
                 S_OK);
        free(init);
        if (imm2.p) {
            expect_fail(E, &imm2, 0, 0, 0, s->err_resource);
            res_free(&imm2);
        }
        if (imm3.p) {
            expect_fail(E, &imm3, 0, 1, 0, s->err_resource);
            res_free(&imm3);
        }
    }
    /* ...if a cl_mem from subresource subresource of resource has already been created. */
    h_at("%s: duplicate subresource", s->name);
    cl_mem a = sh_create_tex2d(s, E->ctx, 0, t2.p, 3, &e);
    CHECK_ERR(e, CL_SUCCESS);
    expect_fail(E, &t2, 3, 0, CL_MEM_READ_ONLY, s->err_resource);
    cl_mem b = sh_create_tex2d(s, E->ctx, 0, t2.p, 4, &e); /* another subresource is fine */
    CHECK_ERR(e, CL_SUCCESS);
    sharing other_flavour;
    sharing_init(&other_flavour, s->platform, s->api, !s->nv);
    e = CL_SUCCESS;
    cl_mem c = sh_create_tex2d(&other_flavour, E->ctx, 0, t2.p, 3, &e);
    CHECK(c == NULL);
    CHECK_ERR(e, s->err_resource);
    if (a)
        clReleaseMemObject(a);
    if (b)
        clReleaseMemObject(b);
    a = sh_create_tex3d(s, E->ctx, 0, t3.p, 1, &e);
    CHECK_ERR(e, CL_SUCCESS);
    expect_fail(E, &t3, 1, 1, 0, s->err_resource);
    if (a)
        clReleaseMemObject(a);
    a = sh_create_tex2d(s, E->ctx, 0, t2.p, 3, &e); /* free again once the first is gone */
    CHECK_ERR(e, CL_SUCCESS);
    if (a)
        clReleaseMemObject(a);
    /* ...or if context was not created against the same Direct3D device from which resource was created. */
    if (second->device) {
        h_at("%s: texture of another device", s->name);
        res f2, f3;
        if (SUCCEEDED(gfx_tex2d(second, &f2, 8, 8, 1, 1, DXGI_FORMAT_R8G8B8A8_UNORM, 1, D3D11_USAGE_DEFAULT,
                                D3D11_BIND_SHADER_RESOURCE, 0, 0, NULL))) {
            expect_fail(E, &f2, 0, 0, 0, s->err_resource);
            res_free(&f2);
        }
        if (SUCCEEDED(gfx_tex3d(second, &f3, 8, 8, 2, 1, DXGI_FORMAT_R8G8B8A8_UNORM, D3D11_USAGE_DEFAULT,
                                D3D11_BIND_SHADER_RESOURCE, 0, 0, NULL))) {
            expect_fail(E, &f3, 0, 1, 0, s->err_resource);
            res_free(&f3);
        }
    }
    /* CL_INVALID_IMAGE_FORMAT_DESCRIPTOR if the texture format is not listed in the table. */
    static const struct {
        DXGI_FORMAT f;
        const char *name;
        UINT bind;
    } outside[] = {
        {DXGI_FORMAT_R8G8B8A8_UNORM_SRGB, "R8G8B8A8_UNORM_SRGB", D3D11_BIND_SHADER_RESOURCE},
        {DXGI_FORMAT_B8G8R8X8_UNORM, "B8G8R8X8_UNORM", D3D11_BIND_SHADER_RESOURCE},
        {DXGI_FORMAT_BC1_UNORM, "BC1_UNORM", D3D11_BIND_SHADER_RESOURCE},
        {DXGI_FORMAT_R10G10B10A2_UNORM, "R10G10B10A2_UNORM", D3D11_BIND_SHADER_RESOURCE},
        {DXGI_FORMAT_R11G11B10_FLOAT, "R11G11B10_FLOAT", D3D11_BIND_SHADER_RESOURCE},
        {DXGI_FORMAT_R32G32B32_FLOAT, "R32G32B32_FLOAT", D3D11_BIND_SHADER_RESOURCE},
        {DXGI_FORMAT_D32_FLOAT, "D32_FLOAT", D3D11_BIND_DEPTH_STENCIL},
    };
    for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++) {
        h_at("%s: format %s", s->name, outside[i].name);
        res r;
        CHECK_HR(gfx_tex2d(E->g, &r, 8, 8, 1, 1, outside[i].f, 1, D3D11_USAGE_DEFAULT, outside[i].bind, 0, 0, NULL),
                 S_OK);
        if (r.p) {
            expect_fail(E, &r, 0, 0, 0, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
            res_free(&r);
        }
        if (outside[i].bind == D3D11_BIND_DEPTH_STENCIL || outside[i].f == DXGI_FORMAT_BC1_UNORM)
            continue;
        /* 3D textures of a format are optional in Direct3D 11 (CheckFormatSupport): DXVK on NVIDIA
         * has no R32G32B32_FLOAT ones, since the Vulkan driver has no such 3D images. */
        if (!gfx_supports_tex3d(E->g, outside[i].f)) {
            printf("NOTE device: no 3D textures of %s (CheckFormatSupport): its 3D case not run\n", outside[i].name);
            continue;
        }
        CHECK_HR(gfx_tex3d(E->g, &r, 8, 8, 2, 1, outside[i].f, D3D11_USAGE_DEFAULT, outside[i].bind, 0, 0, NULL),
                 S_OK);
        if (r.p) {
            expect_fail(E, &r, 0, 1, 0, CL_INVALID_IMAGE_FORMAT_DESCRIPTOR);
            res_free(&r);
        }
    }
    /* CL_INVALID_CONTEXT if context is not a valid context (NULL, or one without a Direct3D device). */
    h_at("%s: invalid context", s->name);
    e = CL_SUCCESS;
    CHECK(sh_create_tex2d(s, NULL, 0, t2.p, 0, &e) == NULL);
    CHECK_ERR(e, CL_INVALID_CONTEXT);
    e = CL_SUCCESS;
    CHECK(sh_create_tex3d(s, NULL, 0, t3.p, 0, &e) == NULL);
    CHECK_ERR(e, CL_INVALID_CONTEXT);
    cl_context plain = clCreateContext(NULL, 1, &E->dev, NULL, NULL, &e);
    if (plain) {
        e = CL_SUCCESS;
        CHECK(sh_create_tex2d(s, plain, 0, t2.p, 0, &e) == NULL);
        CHECK_ERR(e, CL_INVALID_CONTEXT);
        e = CL_SUCCESS;
        CHECK(sh_create_tex3d(s, plain, 0, t3.p, 0, &e) == NULL);
        CHECK_ERR(e, CL_INVALID_CONTEXT);
        /* CL_IMAGE_D3D1x_SUBRESOURCE on an image not created from Direct3D: CL_INVALID_D3D1x_RESOURCE. */
        h_at("%s: CL_IMAGE_D3D1x_SUBRESOURCE on a plain image", s->name);
        cl_image_format imf = {CL_RGBA, CL_UNORM_INT8};
        cl_image_desc desc;
        memset(&desc, 0, sizeof desc);
        desc.image_type = CL_MEM_OBJECT_IMAGE2D;
        desc.image_width = desc.image_height = 4;
        cl_mem img = clCreateImage(plain, CL_MEM_READ_WRITE, &imf, &desc, NULL, &e);
        cl_uint sub = 0;
        if (img) {
            CHECK_ERR(clGetImageInfo(img, s->image_subresource, sizeof sub, &sub, NULL), s->err_resource);
            clReleaseMemObject(img);
        }
        clReleaseContext(plain);
    }
    /* Queries: a too small param_value_size is CL_INVALID_VALUE; the size query alone works. */
    h_at("%s: subresource query sizes", s->name);
    a = sh_create_tex2d(s, E->ctx, 0, t2.p, 5, &e);
    if (a) {
        unsigned char tiny[2];
        CHECK_ERR(clGetImageInfo(a, s->image_subresource, sizeof tiny, tiny, NULL), CL_INVALID_VALUE);
        size_t ret = 0;
        CHECK_ERR(clGetImageInfo(a, s->image_subresource, 0, NULL, &ret), CL_SUCCESS);
        CHECK(ret == sizeof(cl_uint));
        cl_image_info other = s->api == API_D3D11 ? CL_IMAGE_D3D10_SUBRESOURCE_KHR : CL_IMAGE_D3D11_SUBRESOURCE_KHR;
        cl_int other_err = s->api == API_D3D11 ? CL_INVALID_D3D10_RESOURCE_KHR : CL_INVALID_D3D11_RESOURCE_KHR;
        cl_uint sub = 0;
        CHECK_ERR(clGetImageInfo(a, other, sizeof sub, &sub, NULL), other_err);
        clReleaseMemObject(a);
    }
    h_at("%s: refcounts after errors", s->name);
    CHECK_EQ(com_refcount(t2.p), refs2);
    CHECK_EQ(com_refcount(t3.p), refs3);
    res_free(&t2);
    res_free(&t3);
}

int main(void)
{
    h_begin("textures", 120);
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
        env E = {&s, &g, NULL, NULL, NULL, 0};
        E.ctx = h_context(&s, &g, -1, &E.dev, NULL);
        if (E.ctx)
            E.q = h_queue(E.ctx, E.dev);
        if (E.q) {
            E.writes3d = h_has_ext(E.dev, "cl_khr_3d_image_writes");
            formats(&E, 0);
            formats(&E, 1);
            /* Sizes: 4x4 to 2048x2048, with mip chains and array slices. The reduced mode leaves out the
             * large ones (2048x2048, 3D 128x64x32, issue 13's SNORM shapes below), whose paths (full chains,
             * round trips on the first and last subresources only) the smaller shapes take too. */
            int full = !h_reduced();
            mips_and_arrays(&E, 0, 4, 4, 1, 1, DXGI_FORMAT_R8G8B8A8_UNORM, 1);
            mips_and_arrays(&E, 0, 64, 32, 3, 0, DXGI_FORMAT_R8G8B8A8_UNORM, 1);
            mips_and_arrays(&E, 0, 13, 7, 2, 0, DXGI_FORMAT_R16_FLOAT, 1);
            mips_and_arrays(&E, 0, 256, 256, 2, 4, DXGI_FORMAT_R32_FLOAT, 0);
            if (full)
                mips_and_arrays(&E, 0, 2048, 2048, 1, 0, DXGI_FORMAT_R8G8B8A8_UNORM, 0);
            mips_and_arrays(&E, 1, 32, 16, 8, 0, DXGI_FORMAT_R8G8B8A8_UNORM, 1);
            mips_and_arrays(&E, 1, 9, 5, 3, 0, DXGI_FORMAT_R32_FLOAT, 1);
            if (full)
                mips_and_arrays(&E, 1, 128, 64, 32, 0, DXGI_FORMAT_R16G16B16A16_SINT, 0);
            /* Issue 13: every table format x {2D with mips, 2D array with mips, 3D with mips}, sizes that are
             * not powers of two, the full round trip on every subresource. */
            for (size_t fi = 0; fi < sizeof fmt_table / sizeof fmt_table[0]; fi++) {
                if (!fmt_selected(&fmt_table[fi]))
                    continue;
                mips_and_arrays(&E, 0, 15, 37, 1, 2, fmt_table[fi].dxgi, 1);
                mips_and_arrays(&E, 0, 23, 11, 3, 3, fmt_table[fi].dxgi, 1);
                mips_and_arrays(&E, 1, 13, 9, 5, 3, fmt_table[fi].dxgi, 1);
            }
            /* Issue 13's reported SNORM shapes, exactly as reported (creation failed on an H100 for these
             * 8-bit SNORM formats with mips or array slices). */
            static const DXGI_FORMAT snorm8[] = {DXGI_FORMAT_R8G8B8A8_SNORM, DXGI_FORMAT_R8G8_SNORM,
                                                 DXGI_FORMAT_R8_SNORM};
            for (size_t fi = 0; full && fi < sizeof snorm8 / sizeof snorm8[0]; fi++)
                mips_and_arrays(&E, 1, 128, 256, 64, 4, snorm8[fi], 0);
            if (full) {
                mips_and_arrays(&E, 0, 128, 128, 6, 4, DXGI_FORMAT_R8G8_SNORM, 0);
                mips_and_arrays(&E, 0, 767, 1025, 1, 4, DXGI_FORMAT_R8_SNORM, 0);
            }
            usages(&E);
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
